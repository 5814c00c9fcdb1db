package rest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
	"github.com/mediamock/mediamock/spec"
)

// service is openapi.json, parsed once for the package's tests.
var service = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.ParseEmbedded("openapi.json", spec.OpenAPI)
})

// rig is a REST front over a fresh engine on a manual clock, its requests
// passing the edge through the door the server gives REST.
type rig struct {
	f   *Front
	env *edge.Env
}

func newRig(t *testing.T) *rig {
	t.Helper()
	api, err := service()
	require.NoError(t, err)
	eng := testkit.Engine(t)
	env := &edge.Env{Eng: eng, Gate: gate.New(eng), Rules: fault.NewSet(0), API: api,
		Journal: journal.New(100, 4096), Journals: journal.NewRings(10, 4096), Coverage: &journal.Counts{FaultKinds: fault.Kinds()},
		Log: slog.New(slog.DiscardHandler), WallClock: time.Now, Stop: context.Background(),
		Sleep: func(context.Context, time.Duration) {}, MaxBodyBytes: 1 << 20, ListenURL: "http://127.0.0.1:9"}
	pipeline := &ops.Env{Eng: eng, Gate: env.Gate, Rules: env.Rules, API: api, Coverage: env.Coverage, Log: env.Log,
		Stop: env.Stop, Delay: env.Delay, MaxBodyBytes: env.MaxBodyBytes, OwnFileURL: env.IsOwnFile}
	return &rig{f: New(env, pipeline, spec.OpenAPI), env: env}
}

// do serves a request from a local client (Host localhost).
func (r *rig) do(method, target, key string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Host = "localhost"
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	r.env.Serve(rec, req, edge.Door{Front: "rest", Journaled: true, Faults: true}, r.f.Serve)
	return rec
}

// errorCode is the error.code of an answer's body ("" when none).
func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body wire.ErrorBody
	if json.Unmarshal(rec.Body.Bytes(), &body) != nil {
		return ""
	}
	return body.Error.Code
}

var pathVar = regexp.MustCompile(`\{[^}]+\}`)

// Every operation of openapi.json is routed to itself, in the spec's
// order: a request without a credential reaches the operation's pipeline
// (its 401 names the operation in the journal), never a 404 or a 405.
func TestEveryOperationIsRouted(t *testing.T) {
	r := newRig(t)
	api, _ := service()
	routed := 0
	for _, op := range api.Operations() {
		if op.Scope == "" {
			continue
		}
		t.Run(op.ID, func(t *testing.T) {
			r.env.Journal.Clear()
			rec := r.do(op.Method, BasePath+pathVar.ReplaceAllString(op.Path, "1"), "", nil)
			assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s", rec.Body)
			got := r.env.Journal.List(journal.Filter{})
			require.Len(t, got, 1)
			assert.Equal(t, op.ID, got[0].Operation)
			assert.Equal(t, "rest", got[0].Front)
		})
		routed++
	}
	assert.NotZero(t, routed)
}

// What the router answers itself, before any operation.
func TestRouterAnswers(t *testing.T) {
	r := newRig(t)
	tests := []struct {
		name, method, target, key string
		status                    int
		code                      string // the error's code; "" for none
		header                    map[string]string
	}{
		{"no such path", "GET", BasePath + "/nope", "", 404, "not_found", nil},
		{"outside the base path", "GET", "/v2/account", "", 404, "not_found", nil},
		{"a method the path does not serve", "DELETE", BasePath + "/account", "", 405, "method_not_allowed",
			map[string]string{"Allow": "GET"}},
		{"the document", "GET", BasePath + "/openapi.json", "", 200, "", nil},
		{"a 404 carries the caller's rate window", "GET", BasePath + "/nope", "mk_test_all_scopes", 404, "not_found",
			map[string]string{"X-RateLimit-Limit": "120"}},
		{"files take GET and HEAD only", "POST", wire.FilesPath + "x", "", 405, "method_not_allowed",
			map[string]string{"Allow": "GET, HEAD", "X-Content-Type-Options": "nosniff"}},
		{"an address that is no file", "GET", wire.FilesPath + "not-a-file", "", 404, "not_found", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := r.do(tt.method, tt.target, tt.key, nil)
			assert.Equal(t, tt.status, rec.Code, "%s", rec.Body)
			assert.Equal(t, tt.code, errorCode(t, rec))
			for k, v := range tt.header {
				assert.Equal(t, v, wire.HeaderValue(rec.Header(), k), k)
			}
		})
	}
	t.Run("the document is openapi.json", func(t *testing.T) {
		rec := r.do("GET", BasePath+"/openapi.json", "", nil)
		assert.Equal(t, spec.OpenAPI, rec.Body.Bytes())
		head := r.do("HEAD", BasePath+"/openapi.json", "", nil)
		assert.Equal(t, 200, head.Code)
		assert.Empty(t, head.Body.Bytes())
	})
}

// A file is served like a CDN: no credential, its type never sniffed, an
// ETag of its content, and ?download=1 makes it an attachment.
func TestFilesServeLikeACDN(t *testing.T) {
	r := newRig(t)
	pg, err := r.env.Eng.ListAssets(sim.Principal{WorkspaceID: 1}, sim.AssetQuery{Status: sim.StatusCompleted, Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, pg.Data)
	target := wire.FilesPath + r.env.Eng.AssetFile(pg.Data[0]).Path()

	rec := r.do("GET", target, "", nil)
	require.Equal(t, 200, rec.Code, "%s", rec.Body)
	assert.Equal(t, pg.Data[0].MimeType, rec.Header().Get("Content-Type"))
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	assert.Empty(t, rec.Header().Get("Content-Disposition"))
	etag := rec.Header().Get("ETag")
	assert.Regexp(t, `^"[0-9a-f]{32}"$`, etag)

	dl := r.do("GET", target+"?download=1", "", nil)
	assert.Equal(t, rec.Body.Bytes(), dl.Body.Bytes())
	assert.Contains(t, dl.Header().Get("Content-Disposition"), "attachment")
	assert.Equal(t, etag, dl.Header().Get("ETag"))

	req := httptest.NewRequest("GET", target, nil)
	req.Host = "attacker.example"
	other := httptest.NewRecorder()
	r.env.Serve(other, req, edge.Door{Front: "rest", Faults: true}, r.f.Serve)
	assert.Equal(t, http.StatusForbidden, other.Code, "a rebound host reaches no file")
	assert.Equal(t, "forbidden_host", errorCode(t, other))
}

// Uploads are capped near their image limit (as multipart, or as base64
// in JSON), unless the server's own cap is tighter; everything else has the
// server's cap.
func TestBodyLimit(t *testing.T) {
	r := newRig(t)
	multipart := int64(sim.MaxImageBytes + uploadOverhead)
	inJSON := int64(base64.StdEncoding.EncodedLen(sim.MaxImageBytes)) + uploadOverhead
	tests := []struct {
		name, path, ctype string
		serverCap         int64
		want              int64
		code              string
	}{
		{"an upload as a form", BasePath + "/uploads", "multipart/form-data; boundary=x", 64 << 20, multipart, "file_too_large"},
		{"an upload in JSON", BasePath + "/uploads", "application/json", 64 << 20, inJSON, "file_too_large"},
		{"an upload, the server's cap tighter", BasePath + "/uploads", "application/json", 1 << 20, 1 << 20, "payload_too_large"},
		{"any other operation", BasePath + "/generations", "application/json", 64 << 20, 64 << 20, "payload_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.env.MaxBodyBytes = tt.serverCap
			req := httptest.NewRequest("POST", tt.path, nil)
			req.Header.Set("Content-Type", tt.ctype)
			got, err := r.f.BodyLimit(req)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.code, sim.AsError(err).Code)
		})
	}
}

// The ETag is a hash of the content, kept per path (a file's bytes never
// change while its address stands), and the content is left at its start
// for serving.
func TestETags(t *testing.T) {
	var c etags
	content := strings.NewReader("the bytes")
	tag, err := c.of("a", content)
	require.NoError(t, err)
	assert.Regexp(t, `^"[0-9a-f]{32}"$`, tag)
	rest, _ := content.ReadByte()
	assert.Equal(t, byte('t'), rest, "read from the start again")

	again, err := c.of("a", strings.NewReader("other bytes"))
	require.NoError(t, err)
	assert.Equal(t, tag, again, "kept per path")
	other, err := c.of("b", strings.NewReader("other bytes"))
	require.NoError(t, err)
	assert.NotEqual(t, tag, other)
	same, err := c.of("c", strings.NewReader("the bytes"))
	require.NoError(t, err)
	assert.Equal(t, tag, same, "the same content, the same tag")
}
