package contract_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image/gif"
	"image/jpeg"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
)

// Helpers shared by the per-operation contract tests.

// virtualClock makes wait_seconds move the simulated clock: a long poll
// answers at once with the state at the end of the wait.
func virtualClock(o *mediamock.Options) { o.Clock = sim.ClockVirtual }

// The wire shapes the tests read (a subset of openapi.json, decoded
// leniently: the harness has already validated every response).

type apiProblem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type apiAsset struct {
	ID              int64       `json:"id"`
	Object          string      `json:"object"`
	Kind            string      `json:"kind"`
	Status          string      `json:"status"`
	Model           string      `json:"model"`
	Title           string      `json:"title"`
	Prompt          string      `json:"prompt"`
	ProjectID       int64       `json:"project_id"`
	Credits         int64       `json:"credits"`
	URL             string      `json:"url"`
	DownloadURL     string      `json:"download_url"`
	MimeType        string      `json:"mime_type"`
	Width           int         `json:"width"`
	Height          int         `json:"height"`
	DurationSeconds int         `json:"duration_seconds"`
	Error           *apiProblem `json:"error"`
	CreatedAt       string      `json:"created_at"`
}

type apiGeneration struct {
	Object         string     `json:"object"`
	Status         string     `json:"status"`
	Assets         []apiAsset `json:"assets"`
	CreditsCharged int64      `json:"credits_charged"`
	CreditsBalance int64      `json:"credits_balance"`
	CoveredByGift  bool       `json:"covered_by_monthly_gift"`
}

type apiGift struct {
	ModelID   string `json:"model_id"`
	Remaining int    `json:"remaining"`
	PerMonth  int    `json:"per_month"`
	RenewsAt  string `json:"renews_at"`
}

type apiAccount struct {
	Object             string    `json:"object"`
	WorkspaceID        int64     `json:"workspace_id"`
	WorkspaceName      string    `json:"workspace_name"`
	Plan               string    `json:"plan"`
	CreditsBalance     int64     `json:"credits_balance"`
	RateLimitPerMinute int       `json:"rate_limit_per_minute"`
	Scopes             []string  `json:"scopes"`
	TokenType          string    `json:"token_type"`
	PublishingAllowed  bool      `json:"publishing_allowed"`
	MonthlyGifts       []apiGift `json:"monthly_gifts"`
}

type apiEncoreVideo struct {
	ID              int64  `json:"id"`
	Object          string `json:"object"`
	Kind            string `json:"kind"`
	Status          string `json:"status"`
	URL             string `json:"url"`
	DownloadURL     string `json:"download_url"`
	MimeType        string `json:"mime_type"`
	DurationSeconds int    `json:"duration_seconds"`
	Width           int    `json:"width"`
	Height          int    `json:"height"`
}

type apiEncore struct {
	ID             int64           `json:"id"`
	Object         string          `json:"object"`
	Effect         string          `json:"effect"`
	Status         string          `json:"status"`
	AssetID        int64           `json:"asset_id"`
	StartFrameURL  string          `json:"start_frame_url"`
	Video          *apiEncoreVideo `json:"video"`
	ShareURL       string          `json:"share_url"`
	Credits        int64           `json:"credits"`
	Error          *apiProblem     `json:"error"`
	CreatedAt      string          `json:"created_at"`
	CreditsCharged *int64          `json:"credits_charged"`
	CreditsBalance *int64          `json:"credits_balance"`
}

type apiDelivery struct {
	SocialAccountID int64       `json:"social_account_id"`
	Platform        string      `json:"platform"`
	Handle          string      `json:"handle"`
	Status          string      `json:"status"`
	PostURL         string      `json:"post_url"`
	PublishedAt     string      `json:"published_at"`
	Error           *apiProblem `json:"error"`
}

type apiPublication struct {
	ID          int64          `json:"id"`
	Object      string         `json:"object"`
	Status      string         `json:"status"`
	Caption     string         `json:"caption"`
	AssetIDs    []int64        `json:"asset_ids"`
	MediaType   string         `json:"media_type"`
	Options     map[string]any `json:"options"`
	ScheduledAt string         `json:"scheduled_at"`
	PublishedAt string         `json:"published_at"`
	Deliveries  []apiDelivery  `json:"deliveries"`
	CreatedAt   string         `json:"created_at"`
}

// apiList is the list envelope.
type apiList[T any] struct {
	Object     string `json:"object"`
	Data       []T    `json:"data"`
	HasMore    bool   `json:"has_more"`
	NextCursor *int64 `json:"next_cursor"`
}

// decodeAs decodes a result's body into a T.
func decodeAs[T any](r *result) T {
	r.t.Helper()
	var v T
	r.Decode(&v)
	return v
}

func (e *env) account(token string) apiAccount {
	e.t.Helper()
	return decodeAs[apiAccount](e.get(token, "/account").expect(http.StatusOK))
}

func (e *env) balance(token string) int64 {
	e.t.Helper()
	return e.account(token).CreditsBalance
}

// generate creates a generation and expects 201.
func (e *env) generate(token string, body map[string]any) apiGeneration {
	e.t.Helper()
	return decodeAs[apiGeneration](e.post(token, "/generations", body).expect(http.StatusCreated))
}

// generation reads the generation of an asset.
func (e *env) generation(token string, id int64) apiGeneration {
	e.t.Helper()
	return decodeAs[apiGeneration](e.get(token, fmt.Sprintf("/generations/%d", id)).expect(http.StatusOK))
}

// upload imports an image from a data URI (JSON form) and expects 201.
func (e *env) upload(token string, data []byte, mime, title string) apiAsset {
	e.t.Helper()
	body := map[string]any{"image_url": testkit.DataURI(mime, data)}
	if title != "" {
		body["title"] = title
	}
	return decodeAs[apiAsset](e.post(token, "/uploads", body).expect(http.StatusCreated))
}

// uploadPNG imports a w x h PNG.
func (e *env) uploadPNG(token string, w, h int, title string) apiAsset {
	e.t.Helper()
	return e.upload(token, testkit.PNG(e.t, w, h), "image/png", title)
}

// fetch GETs a file URL (no token: files are served like a CDN).
func (e *env) fetch(url string, header ...string) *result {
	e.t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return e.call(req{method: http.MethodGet, path: url, header: h})
}

// pages walks a list from its first page with the given limit, checking
// the envelope of every page, and returns the items in order.
func pages[T any](e *env, token, path string, limit int) ([]T, int) {
	e.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var all []T
	cursor := ""
	n := 0
	for {
		n++
		require.Less(e.t, n, 100, "pagination does not end")
		pg := decodeAs[apiList[T]](e.get(token, fmt.Sprintf("%s%slimit=%d%s", path, sep, limit, cursor)).expect(http.StatusOK))
		require.Equal(e.t, "list", pg.Object)
		require.LessOrEqual(e.t, len(pg.Data), limit)
		all = append(all, pg.Data...)
		if !pg.HasMore {
			require.Nil(e.t, pg.NextCursor, "no next_cursor on the last page")
			return all, n
		}
		require.Len(e.t, pg.Data, limit, "a page before the last is full")
		require.NotNil(e.t, pg.NextCursor, "next_cursor when has_more")
		cursor = fmt.Sprintf("&starting_after=%d", *pg.NextCursor)
	}
}

// violation returns the violation of a field, failing when there is none.
func violation(t *testing.T, r *result, field string) sim.Violation {
	t.Helper()
	for _, v := range r.Violations() {
		if v.Field == field {
			return v
		}
	}
	require.Failf(t, "no violation of the field", "field %q not in %v: %s", field, r.Fields(), r.Body)
	return sim.Violation{}
}

// expectInvalid expects 400 validation_failed whose violations name
// exactly these fields, each with a reason, and returns the result.
func (r *result) expectInvalid(fields ...string) *result {
	r.t.Helper()
	r.expect(http.StatusBadRequest, "validation_failed")
	assert.ElementsMatch(r.t, fields, r.Fields(), "violated fields: %s", r.Body)
	for _, v := range r.Violations() {
		assert.NotEmpty(r.t, v.Reason, "every violation says why")
		assert.NotEmpty(r.t, v.In)
	}
	return r
}

// errorDetails is error.details of an error response.
func (r *result) errorDetails() map[string]any {
	r.t.Helper()
	d, _ := jsonPath(r.JSON(), "error", "details").(map[string]any)
	return d
}

// --- images

func jpegImage(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, testkit.Picture(w, h), &jpeg.Options{Quality: 80}))
	return b.Bytes()
}

func gifImage(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, gif.Encode(&b, testkit.Picture(w, h), nil))
	return b.Bytes()
}

// webpImage is a lossless (VP8L) WEBP of w x h: a RIFF container with the
// VP8L header, which is all a header reader needs.
func webpImage(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	payload := append([]byte{0x2F}, binary.LittleEndian.AppendUint32(nil, bits)...)
	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))...)
	chunk = append(chunk, payload...)
	if len(payload)%2 == 1 {
		chunk = append(chunk, 0)
	}
	body := append([]byte("WEBP"), chunk...)
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// pngHeader is a PNG signature and an IHDR chunk declaring a w x h RGB
// picture, and nothing else: enough for a header reader.
func pngHeader(w, h uint32) []byte {
	out := []byte("\x89PNG\r\n\x1a\n")
	data := []byte("IHDR")
	data = binary.BigEndian.AppendUint32(data, w)
	data = binary.BigEndian.AppendUint32(data, h)
	data = append(data, 8, 2, 0, 0, 0)
	out = binary.BigEndian.AppendUint32(out, 13)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(data))
}

// --- multipart

type formPart struct {
	name, filename, contentType string
	data                        []byte
}

// multipartForm encodes parts as multipart/form-data.
func multipartForm(t *testing.T, parts ...formPart) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.filename != "" {
			disp += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, err = w.Write(p.data)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return b.Bytes(), mw.FormDataContentType()
}

// --- time

// parseTime reads a wire timestamp and checks its form: ISO 8601 with an
// explicit UTC offset.
func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err, "timestamp %q", s)
	_, offset := ts.Zone()
	assert.Zero(t, offset, "timestamps are UTC: %q", s)
	return ts.UTC()
}

// now is the simulated time of an in-process server.
func (e *env) now() time.Time {
	e.t.Helper()
	e.needsEngine()
	return e.srv.Now()
}

// ids are the ids of assets.
func ids(as []apiAsset) []int64 {
	out := make([]int64, 0, len(as))
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// sub is the environment for a subtest: failures are reported to (and stop)
// the subtest, not its parent.
func (e *env) sub(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// modalityNames are the modalities of the table of modalities, as the
// contract's enums list them.
func modalityNames() []any {
	var out []any
	for _, m := range fixtures.ModalityNames() {
		out = append(out, m)
	}
	return out
}

// kindNames are the asset kinds of the table of modalities.
func kindNames() []any {
	var out []any
	for _, k := range fixtures.AssetKinds() {
		out = append(out, k.Name)
	}
	return out
}
