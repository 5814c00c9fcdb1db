package har_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/har"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The parts of HAR 1.2 every exporter must write (the specification's
// required fields), and the mock's annotations a test reads.
type log struct {
	Log struct {
		Version string `json:"version"`
		Creator *struct {
			Name    string  `json:"name"`
			Version *string `json:"version"`
		} `json:"creator"`
		Scope   string  `json:"_scope"`
		Entries []entry `json:"entries"`
	} `json:"log"`
}

type entry struct {
	StartedDateTime string          `json:"startedDateTime"`
	Time            *float64        `json:"time"`
	Request         request         `json:"request"`
	Response        response        `json:"response"`
	Cache           json.RawMessage `json:"cache"`
	Timings         *struct {
		Send, Wait, Receive *float64
	} `json:"timings"`
	ID        string   `json:"_id"`
	Seq       int64    `json:"_seq"`
	Operation string   `json:"_operation"`
	SandboxID string   `json:"_sandboxId"`
	SimTime   string   `json:"_simTime"`
	Fault     string   `json:"_fault"`
	AnswerCut bool     `json:"_answerCut"`
	Findings  []string `json:"_findings"`
}

type pair struct{ Name, Value string }

type request struct {
	Method      string    `json:"method"`
	URL         string    `json:"url"`
	HTTPVersion string    `json:"httpVersion"`
	Cookies     []any     `json:"cookies"`
	Headers     []pair    `json:"headers"`
	QueryString []pair    `json:"queryString"`
	HeadersSize *int      `json:"headersSize"`
	BodySize    *int64    `json:"bodySize"`
	PostData    *postData `json:"postData"`
}

type postData struct {
	MimeType  string `json:"mimeType"`
	Text      string `json:"text"`
	Encoding  string `json:"_encoding"`
	Truncated bool   `json:"_truncated"`
}

type response struct {
	Status      int    `json:"status"`
	StatusText  string `json:"statusText"`
	HTTPVersion string `json:"httpVersion"`
	Cookies     []any  `json:"cookies"`
	Headers     []pair `json:"headers"`
	Content     struct {
		Size      *int64 `json:"size"`
		MimeType  string `json:"mimeType"`
		Text      string `json:"text"`
		Encoding  string `json:"encoding"`
		Truncated bool   `json:"_truncated"`
	} `json:"content"`
	RedirectURL *string `json:"redirectURL"`
	HeadersSize *int    `json:"headersSize"`
	BodySize    *int64  `json:"bodySize"`
	AnswerCut   bool    `json:"_answerCut"`
}

// decode reads a HAR log and holds it to HAR 1.2's required fields.
func decode(t *testing.T, data []byte) log {
	t.Helper()
	var l log
	require.NoError(t, json.Unmarshal(data, &l), "%.500s", data)
	assert.Equal(t, "1.2", l.Log.Version)
	require.NotNil(t, l.Log.Creator)
	assert.Equal(t, "mediamock", l.Log.Creator.Name)
	assert.NotNil(t, l.Log.Creator.Version)
	for _, e := range l.Log.Entries {
		assert.NotEmpty(t, e.StartedDateTime, e.ID)
		assert.NotNil(t, e.Time, e.ID)
		assert.JSONEq(t, "{}", string(e.Cache), e.ID)
		require.NotNil(t, e.Timings, e.ID)
		assert.True(t, e.Timings.Send != nil && e.Timings.Wait != nil && e.Timings.Receive != nil, e.ID)
		q := e.Request
		assert.True(t, q.Method != "" && strings.HasPrefix(q.URL, "http://") && q.HTTPVersion != "" && q.Cookies != nil && q.Headers != nil &&
			q.QueryString != nil && q.HeadersSize != nil && q.BodySize != nil, "%s: %+v", e.ID, q)
		if q.PostData != nil {
			assert.NotEmpty(t, q.PostData.MimeType, e.ID)
		}
		s := e.Response
		assert.True(t, s.Status > 0 && s.StatusText != "" && s.HTTPVersion != "" && s.Cookies != nil && s.Headers != nil &&
			s.Content.Size != nil && s.Content.MimeType != "" && s.RedirectURL != nil && s.HeadersSize != nil && s.BodySize != nil,
			"%s: %+v", e.ID, s)
		assert.Positive(t, e.Seq, e.ID)
		assert.NotEmpty(t, e.SimTime, e.ID)
	}
	return l
}

func header(h []pair, name string) string {
	for _, p := range h {
		if strings.EqualFold(p.Name, name) {
			return p.Value
		}
	}
	return ""
}

// The journal as HAR: a creation, a long poll, an answer a fault cut and
// an upload, each with its headers, bodies and annotations; a sandbox's
// control token exports its own exchanges only, with the findings of its
// report that cite them.
func TestJournalAsHAR(t *testing.T) {
	srv := mediamock.RunT(t)
	sb := srv.Sandbox(t)
	other := srv.Sandbox(t)
	api := func(key, method, path, ctype string, body []byte, hdr ...string) (int, []byte) {
		req, err := http.NewRequest(method, srv.BaseURL()+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}

	status, body := api(sb.APIKey, "POST", "/generations", "application/json",
		[]byte(`{"modality":"image","model_id":"imagen-4","prompt":"a red fox in the snow"}`))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var g struct {
		Assets []struct{ ID int64 } `json:"assets"`
	}
	require.NoError(t, json.Unmarshal(body, &g))
	status, body = api(sb.APIKey, "GET", fmt.Sprintf("/generations/%d?wait_seconds=30", g.Assets[0].ID), "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	_, err := sb.AddFault(mediamock.FaultSpec{Kind: "truncate", Operation: "getAccount", First: 1})
	require.NoError(t, err)
	api(sb.APIKey, "GET", "/account", "", nil) // its head went, its body was cut
	form, ctype := testkit.UploadForm(t, 6000)
	status, body = api(sb.APIKey, "POST", "/uploads", ctype, form)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	for range 2 {
		api(sb.APIKey, "GET", "/generations/999999", "", nil) // poll-unknown-id
	}
	status, _ = api(other.APIKey, "GET", "/account", "", nil)
	require.Equal(t, http.StatusOK, status)

	status, raw := testkit.Control(t, srv, "GET", "/journal?format=har", "", "Authorization", "Bearer "+sb.ControlToken)
	require.Equal(t, http.StatusOK, status, raw)
	l := decode(t, []byte(raw))
	assert.Equal(t, "sandbox "+sb.ID, l.Log.Scope)
	require.Len(t, l.Log.Entries, 6, "the sandbox's six exchanges, oldest first")
	for i, e := range l.Log.Entries {
		assert.Equal(t, sb.ID, e.SandboxID, "a sandbox's export holds its own exchanges only")
		assert.Equal(t, int64(i+1), e.Seq, "oldest first, by the sandbox journal's numbers")
	}
	create, poll, cut, upload := l.Log.Entries[0], l.Log.Entries[1], l.Log.Entries[2], l.Log.Entries[3]

	assert.Equal(t, "createGeneration", create.Operation)
	assert.Equal(t, srv.BaseURL()+"/generations", create.Request.URL)
	require.NotNil(t, create.Request.PostData)
	assert.Equal(t, "application/json", create.Request.PostData.MimeType)
	assert.Contains(t, create.Request.PostData.Text, `"prompt":"a red fox in the snow"`)
	assert.Equal(t, 201, create.Response.Status)
	assert.Equal(t, "Created", create.Response.StatusText)
	assert.Equal(t, "application/json", create.Response.Content.MimeType)
	assert.Contains(t, create.Response.Content.Text, `"status":"queued"`)
	assert.NotEmpty(t, header(create.Response.Headers, "X-Request-Id"))
	assert.Equal(t, header(create.Response.Headers, "X-Request-Id"), create.ID)
	assert.Equal(t, "Bearer "+sb.APIKey, header(create.Request.Headers, "Authorization"), "a sandbox sees its own key")
	assert.NotEmpty(t, header(create.Request.Headers, "Host"))

	assert.Equal(t, "getGeneration", poll.Operation)
	assert.Equal(t, []pair{{"wait_seconds", "30"}}, poll.Request.QueryString)
	assert.Nil(t, poll.Request.PostData)

	assert.Equal(t, "truncate", cut.Fault)
	assert.True(t, cut.AnswerCut)
	assert.True(t, cut.Response.AnswerCut)
	assert.EqualValues(t, -1, *cut.Response.BodySize, "what reached the client is not known")

	assert.Equal(t, "createUpload", upload.Operation)
	require.NotNil(t, upload.Request.PostData)
	assert.True(t, strings.HasPrefix(upload.Request.PostData.MimeType, "multipart/form-data; boundary="))
	assert.Equal(t, "base64", upload.Request.PostData.Encoding, "a PNG is no text")
	assert.True(t, upload.Request.PostData.Truncated, "the journal keeps the first 4 KB")
	decoded, err := base64.StdEncoding.DecodeString(upload.Request.PostData.Text)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(form, decoded), "the bytes the journal kept")
	assert.EqualValues(t, len(form), *upload.Request.BodySize)

	assert.Equal(t, []string{"poll-unknown-id"}, l.Log.Entries[4].Findings, "the report's finding that cites it")
	assert.Empty(t, create.Findings)

	// Asked by Accept, the same log; another sandbox's holds none of it.
	status, raw2 := testkit.Control(t, srv, "GET", "/journal", "", "Authorization", "Bearer "+sb.ControlToken, "Accept", har.ContentType)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, raw, raw2)
	status, raw = testkit.Control(t, srv, "GET", "/journal?format=har", "", "Authorization", "Bearer "+other.ControlToken)
	require.Equal(t, http.StatusOK, status)
	ol := decode(t, []byte(raw))
	require.Len(t, ol.Log.Entries, 1)
	assert.Equal(t, other.ID, ol.Log.Entries[0].SandboxID)

	// The server's holds both, and limit keeps the newest.
	status, raw = testkit.Control(t, srv, "GET", "/journal?format=har", "")
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, decode(t, []byte(raw)).Log.Entries, 7)
	status, raw = testkit.Control(t, srv, "GET", "/journal?format=har&limit=2", "")
	require.Equal(t, http.StatusOK, status)
	last := decode(t, []byte(raw)).Log.Entries
	require.Len(t, last, 2)
	assert.Equal(t, other.ID, last[1].SandboxID, "the newest last")

	// The Go controls write the same log.
	var b bytes.Buffer
	require.NoError(t, sb.HAR(&b))
	assert.Len(t, decode(t, b.Bytes()).Log.Entries, 6)
}

// A server beyond loopback without a control token hides credentials in
// its reads: in the HAR too.
func TestHARHidesCredentialsWhereReadsHideTokens(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0" })
	status, _, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	status, raw := testkit.Control(t, srv, "GET", "/journal?format=har", "")
	require.Equal(t, http.StatusOK, status, raw)
	l := decode(t, []byte(raw))
	require.Len(t, l.Log.Entries, 1)
	assert.Equal(t, "Bearer mk_…", header(l.Log.Entries[0].Request.Headers, "Authorization"))
	assert.NotContains(t, raw, mediamock.KeyAllScopes)
}
