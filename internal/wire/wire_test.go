package wire

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
)

// newView is a view of a fresh engine on a manual clock, with base as its
// public address.
func newView(t *testing.T, base string) View {
	t.Helper()
	eng := testkit.Engine(t)
	return View{Base: base, Eng: eng}
}

// jsonOf renders v as a response body does, without the final newline.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := Encode(v)
	require.NoError(t, err)
	return string(b)
}

// Each error kind has one status, at the edge alone; a kind it does not
// know is a 500.
func TestStatusOfEveryKind(t *testing.T) {
	for kind, status := range map[sim.Kind]int{
		sim.EINVALID: 400, sim.EUNAUTHORIZED: 401, sim.EPAYMENT: 402, sim.EFORBIDDEN: 403, sim.ENOTFOUND: 404,
		sim.ENOTALLOWED: 405, sim.ECONFLICT: 409, sim.ETOOLARGE: 413, sim.EUNSUPPORTED: 415, sim.ERATELIMIT: 429,
		sim.EINTERNAL: 500, sim.EUNAVAILABLE: 503, sim.Kind("brand_new"): 500,
	} {
		t.Run(string(kind), func(t *testing.T) { assert.Equal(t, status, Status(kind)) })
	}
}

// The spec's error object: { error: { code, message, details } }, with
// details only when there are some; anything but a *sim.Error is an
// internal error that says nothing of itself.
func TestErrorOf(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"an engine error", &sim.Error{Kind: sim.EPAYMENT, Code: "insufficient_credits", Message: "Not enough credits.",
			Details: map[string]any{"required": 30, "balance": 2}},
			402, `{"error":{"code":"insufficient_credits","message":"Not enough credits.","details":{"balance":2,"required":30}}}`},
		{"no details, no key", &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No such asset."},
			404, `{"error":{"code":"not_found","message":"No such asset."}}`},
		{"wrapped", fmt.Errorf("read: %w", &sim.Error{Kind: sim.ECONFLICT, Code: "c", Message: "m"}),
			409, `{"error":{"code":"c","message":"m"}}`},
		{"anything else", fmt.Errorf("disk on fire"),
			500, `{"error":{"code":"internal_error","message":"Internal server error."}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ErrorOf(tt.err)
			assert.Equal(t, tt.status, status)
			assert.Equal(t, tt.body, jsonOf(t, body))
		})
	}
}

func TestErrorsOfTheEdge(t *testing.T) {
	tests := []struct {
		name    string
		err     *sim.Error
		kind    sim.Kind
		code    string
		message string
		details map[string]any
	}{
		{"a body over the cap", sim.AsError(BodyError(&http.MaxBytesError{Limit: 1024})), sim.ETOOLARGE, "payload_too_large",
			"The request body is over 1024 bytes.", map[string]any{"limit_bytes": int64(1024)}},
		{"a body that cannot be read", sim.AsError(BodyError(fmt.Errorf("connection reset"))), sim.EINVALID, "invalid_body",
			"The body cannot be read: connection reset.", nil},
		{"no operation", NotFound("GET", "/api/v1/nope"), sim.ENOTFOUND, "not_found", "No operation at GET /api/v1/nope.", nil},
		{"a method not served", MethodNotAllowed("PUT", "files", "GET, HEAD", []string{"GET", "HEAD"}), sim.ENOTALLOWED,
			"method_not_allowed", "PUT is not allowed on files; allowed: GET, HEAD.", map[string]any{"allowed_methods": []string{"GET", "HEAD"}}},
		{"an image over 10 MiB", FileTooLarge(), sim.ETOOLARGE, "file_too_large",
			fmt.Sprintf("The image is over 10 MiB (%d bytes).", sim.MaxImageBytes), map[string]any{"limit_bytes": sim.MaxImageBytes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.kind, tt.err.Kind)
			assert.Equal(t, tt.code, tt.err.Code)
			assert.Equal(t, tt.message, tt.err.Message)
			assert.Equal(t, tt.details, tt.err.Details)
		})
	}
}

func TestUnmarshalJSON(t *testing.T) {
	type req struct {
		Count int      `json:"count"`
		Tags  []string `json:"tags"`
		Ratio float64  `json:"ratio"`
	}
	tests := []struct {
		name  string
		in    string
		want  req
		error string // the error's message; "" for none
	}{
		{"plain", `{"count":2,"tags":["a"]}`, req{Count: 2, Tags: []string{"a"}}, ""},
		{"1.0 is an integer", `{"count":1.0}`, req{Count: 1}, ""},
		{"1e2 is an integer", `{"count":1e2,"ratio":0.5}`, req{Count: 100, Ratio: 0.5}, ""},
		{"1.5 is not", `{"count":1.5}`, req{}, "The body is not valid JSON: json: cannot unmarshal number 1.5 into Go struct field req.count of type int."},
		{"a second value", `{"count":1} {}`, req{}, "The body is not valid JSON: unexpected data after the JSON value."},
		{"cut short", `{"count":`, req{}, "The body is not valid JSON: unexpected EOF."},
		{"empty", ``, req{}, "The body is not valid JSON: unexpected EOF."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got req
			err := UnmarshalJSON([]byte(tt.in), &got)
			if tt.error == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			e := sim.AsError(err)
			assert.Equal(t, "invalid_json", e.Code)
			assert.Equal(t, sim.EINVALID, e.Kind)
			assert.Equal(t, tt.error, e.Message)
		})
	}
	var v map[string]any
	err := DecodeJSONSized(strings.NewReader(`{"a":1}`), 7, &v)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": 1.0}, v)
}

// Bodies are JSON with HTML characters as they are and a final newline; a
// RawJSON goes out as it is; a value that cannot be encoded is the
// internal error's body.
func TestMarshal(t *testing.T) {
	b, ok := Marshal(map[string]string{"prompt": "<b>a & b</b>"})
	require.True(t, ok)
	assert.Equal(t, `{"prompt":"<b>a & b</b>"}`+"\n", string(b.Bytes()))
	b.Release()

	raw := RawJSON(`{"object":"list"}` + "\n")
	b, ok = Marshal(raw)
	require.True(t, ok)
	assert.Equal(t, []byte(raw), b.Bytes())

	b, ok = Marshal(math.NaN())
	assert.False(t, ok)
	assert.JSONEq(t, `{"error":{"code":"internal_error","message":"Internal server error."}}`, string(b.Bytes()))

	// Embedded, a RawJSON is its value without the newline.
	assert.Equal(t, `{"page":{"object":"list"}}`, jsonOf(t, map[string]any{"page": raw}))
}

func TestRendered(t *testing.T) {
	var c Rendered // the zero value is ready
	k := RenderKey{ID: 7, Epoch: 1, Base: "http://a"}
	_, ok := c.Get(k)
	assert.False(t, ok)
	c.Put(k, []byte(`{"id":7}`))
	got, ok := c.Get(k)
	require.True(t, ok)
	assert.Equal(t, `{"id":7}`, string(got))
	for _, other := range []RenderKey{{ID: 7, Epoch: 2, Base: "http://a"}, {ID: 7, Epoch: 1, Base: "http://b"}} {
		_, ok := c.Get(other)
		assert.False(t, ok, "another epoch or base is another rendering: %+v", other)
	}
	for i := range maxRendered {
		c.Put(RenderKey{ID: uint64(1000 + i)}, nil)
	}
	_, ok = c.Get(k)
	assert.False(t, ok, "a full cache starts again")
}

func TestLists(t *testing.T) {
	id := func(n int) uint64 { return uint64(n) }
	str := func(n int) string { return fmt.Sprint(n) }
	tests := []struct {
		name string
		list any
		want string
	}{
		{"a last page", Page(sim.Page[int]{Data: []int{9, 8}}, str, id), `{"object":"list","data":["9","8"],"has_more":false}`},
		{"more after", Page(sim.Page[int]{Data: []int{9, 8}, HasMore: true}, str, id), `{"object":"list","data":["9","8"],"has_more":true,"next_cursor":8}`},
		{"empty is [] not null", Page(sim.Page[int]{}, str, id), `{"object":"list","data":[],"has_more":false}`},
		{"a whole list", Whole([]int{1}, str), `{"object":"list","data":["1"],"has_more":false}`},
		{"a whole empty list", Whole[int, string](nil, str), `{"object":"list","data":[],"has_more":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, jsonOf(t, tt.list)) })
	}
}

// An asset shows its file's address, type, size and length only once
// completed; the download address adds download=1 to whatever query the
// address has.
func TestAssetRendering(t *testing.T) {
	v := newView(t, "https://media.test")
	created := sim.StampOf(sim.DefaultEpoch)
	done := sim.Asset{ID: 5, WorkspaceID: 1, Kind: "image", Status: sim.StatusCompleted, Model: "imagen-4", Credits: 4,
		MimeType: "image/png", Width: 1024, Height: 768, CreatedAt: created}
	ref := v.Eng.AssetFile(done)
	fileURL := "https://media.test/files/" + ref.Path()

	got := v.Asset(done)
	assert.Equal(t, fileURL, got.URL)
	assert.Equal(t, fileURL+"?download=1", got.DownloadURL)
	assert.Equal(t, "asset", got.Object)
	assert.Equal(t, "image/png", got.MimeType)
	assert.Equal(t, 1024, got.Width)
	assert.Equal(t, "2026-01-05T09:00:00+00:00", got.CreatedAt)

	signed := v
	signed.Sign = func(r sim.FileRef) string { return "?expires=9&sig=" + r.Token[:4] }
	got = signed.Asset(done)
	assert.Equal(t, fileURL+"?expires=9&sig="+ref.Token[:4], got.URL)
	assert.Equal(t, got.URL+"&download=1", got.DownloadURL, "a signed address takes download=1 after its query")

	for _, status := range []string{sim.StatusQueued, sim.StatusProcessing, sim.StatusFailed} {
		t.Run(status, func(t *testing.T) {
			a := done
			a.Status = status
			js := jsonOf(t, v.Asset(a))
			for _, hidden := range []string{"url", "download_url", "mime_type", "width", "height"} {
				assert.NotContains(t, js, `"`+hidden+`"`)
			}
			assert.Contains(t, js, `"credits":4`)
		})
	}
}

func TestAccountOf(t *testing.T) {
	renews := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   sim.Account
		want string
	}{
		{"no gifts is []", sim.Account{WorkspaceID: 2, WorkspaceName: "Pixel Garage", Plan: "free", Balance: 10, RateLimit: 20,
			Scopes: []string{"read"}, TokenType: "api_key"},
			`{"object":"account","workspace_id":2,"workspace_name":"Pixel Garage","plan":"free","credits_balance":10,"rate_limit_per_minute":20,"scopes":["read"],"token_type":"api_key","publishing_allowed":false,"monthly_gifts":[]}`},
		{"a gift", sim.Account{WorkspaceID: 1, Plan: "pro", PublishingAllowed: true,
			Gifts: []sim.GiftView{{ModelID: "imagen-4", Remaining: 3, PerMonth: 5, RenewsAt: renews}}},
			`{"object":"account","workspace_id":1,"workspace_name":"","plan":"pro","credits_balance":0,"rate_limit_per_minute":0,"scopes":null,"token_type":"","publishing_allowed":true,"monthly_gifts":[{"model_id":"imagen-4","remaining":3,"per_month":5,"renews_at":"2026-02-01T00:00:00+00:00"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, jsonOf(t, AccountOf(tt.in))) })
	}
}

// The catalog lists every modality, even one without a model, or only
// the one asked for.
func TestCatalogOf(t *testing.T) {
	models := []fixtures.Model{{ID: "imagen-4", Name: "Imagen 4", Modality: "image", OutputMimeType: "image/png"}}
	all := CatalogOf(models, "")
	assert.Equal(t, "model_catalog", all.Object)
	assert.Len(t, all.Modalities, len(fixtures.Modalities))
	for _, m := range fixtures.Modalities {
		assert.NotNil(t, all.Modalities[m.Name], "%s is listed, [] when empty", m.Name)
	}
	require.Len(t, all.Modalities["image"], 1)
	assert.Equal(t, "model", all.Modalities["image"][0].Object)

	only := CatalogOf(nil, "video")
	assert.Equal(t, map[string][]Model{"video": {}}, only.Modalities)
}

// A publication's times are left out until they happen.
func TestPublicationOf(t *testing.T) {
	at := sim.StampOf(sim.DefaultEpoch.Add(time.Hour))
	p := sim.Publication{ID: 3, Status: "scheduled", Caption: "hi", AssetIDs: []uint64{5}, MediaType: "video",
		ScheduledAt: at, CreatedAt: sim.StampOf(sim.DefaultEpoch),
		Deliveries: []sim.Delivery{{SocialAccountID: 1, Platform: "tiktok", Handle: "@acme", Status: "scheduled", Fail: true}}}
	assert.Equal(t, `{"id":3,"object":"publication","status":"scheduled","caption":"hi","asset_ids":[5],"media_type":"video",`+
		`"scheduled_at":"2026-01-05T10:00:00+00:00","deliveries":[{"social_account_id":1,"platform":"tiktok","handle":"@acme","status":"scheduled"}],`+
		`"created_at":"2026-01-05T09:00:00+00:00"}`, jsonOf(t, PublicationOf(p)), "no published_at yet, and no engine-only field (fail)")

	p.Deliveries = nil
	assert.Contains(t, jsonOf(t, PublicationOf(p)), `"deliveries":[]`)
}

func TestDecodedNumbersStayFloatsInMaps(t *testing.T) {
	var v any
	require.NoError(t, UnmarshalJSON([]byte(`{"n":2.0}`), &v))
	assert.Equal(t, map[string]any{"n": 2.0}, v, "an untyped map takes any number as it is")
}
