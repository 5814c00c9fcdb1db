package mediamock_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediamock/mediamock"
)

var fuzzServer = sync.OnceValues(func() (*mediamock.Server, error) {
	return mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockVirtual, JournalSize: 50})
})

var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}

var fuzzTokens = []string{"", mediamock.KeyAllScopes, mediamock.KeyReadOnly, mediamock.KeyFreePlan, "mk_nope", "Basic abc"}

var fuzzTypes = []string{"", "application/json", "multipart/form-data; boundary=x", "text/plain", "application/json; charset=utf-8", "application/octet-stream"}

// FuzzHandler sends anything to the whole server: no answer may be a 5xx or
// a panic, and every error is the spec's error object. The seed corpus is
// one request of each kind the contract tests make.
func FuzzHandler(f *testing.F) {
	seeds := []struct {
		method       uint8
		path         string
		token, ctype uint8
		body         string
	}{
		{0, "/api/v1/account", 1, 0, ""},
		{0, "/api/v1/models?modality=audio&track=music", 1, 0, ""},
		{1, "/api/v1/generations", 1, 1, `{"modality":"image","model_id":"flux-2-pro","prompt":"a fox","count":2}`},
		{1, "/api/v1/generations", 1, 1, `{"modality":"video","model_id":"veo-3-fast","prompt":"a fox","duration":8,"wait_seconds":5}`},
		{1, "/api/v1/generations", 2, 1, `{"modality":"audio","model_id":"openai-tts-1","prompt":"Hello."}`},
		{0, "/api/v1/generations/1000001?wait_seconds=1", 1, 0, ""},
		{0, "/api/v1/assets?kind=image&status=completed&limit=3&starting_after=99", 1, 0, ""},
		{1, "/api/v1/uploads", 1, 1, `{"image_url":"data:image/png;base64,iVBORw0KGgo=","title":"x"}`},
		{1, "/api/v1/uploads", 1, 2, "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n\r\n\x89PNG\r\n--x--\r\n"},
		{0, "/api/v1/encore/effects", 1, 0, ""},
		{1, "/api/v1/encore/creations", 1, 1, `{"effect":"golden-hour","image_url":"https://example.com/a.jpg"}`},
		{0, "/api/v1/encore/creations/1", 1, 0, ""},
		{0, "/api/v1/characters", 1, 0, ""},
		{0, "/api/v1/brand_kits?limit=1", 1, 0, ""},
		{0, "/api/v1/projects?starting_after=1", 1, 0, ""},
		{0, "/api/v1/social/accounts", 1, 0, ""},
		{1, "/api/v1/social/publications", 1, 1, `{"asset_ids":[1],"caption":"hi","platforms":["tiktok"],"scheduled_at":"2026-02-01T00:00:00Z"}`},
		{0, "/api/v1/social/publications?status=scheduled", 1, 0, ""},
		{0, "/api/v1/openapi.json", 0, 0, ""},
		{3, "/api/v1/account", 1, 0, ""},
		{1, "/api/v1/generations", 1, 1, `{"modality":`},
		{1, "/api/v1/generations", 1, 3, `x`},
		{0, "/files/a/1/1/0000000000000000.png", 0, 0, ""},
		{0, "/_mock/clock", 0, 0, ""},
		{1, "/_mock/clock/advance", 0, 1, `{"seconds":30}`},
		{1, "/_mock/faults/fail-next", 0, 1, `{"count":1}`},
		{0, "/_mock/journal?status=400", 0, 0, ""},
		{2, "/_mock/snapshot", 0, 5, "not a snapshot"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.token, s.ctype, []byte(s.body))
	}
	srv, err := fuzzServer()
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, method uint8, path string, token, ctype uint8, body []byte) {
		if len(body) > 1<<16 || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		if strings.HasPrefix(path, "/_mock/reset") || strings.HasPrefix(path, "/_mock/clock/set") {
			return // they move the whole world: fine, but they make the fuzzer slow
		}
		req, err := http.NewRequest(fuzzMethods[int(method)%len(fuzzMethods)], "http://127.0.0.1"+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		if tok := fuzzTokens[int(token)%len(fuzzTokens)]; tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if ct := fuzzTypes[int(ctype)%len(fuzzTypes)]; ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s -> %d: %s", req.Method, path, res.StatusCode, data)
		}
		if res.StatusCode >= 400 && req.Method != "HEAD" {
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(data, &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %s -> %d without the error object: %q", req.Method, path, res.StatusCode, data)
			}
		}
	})
}
