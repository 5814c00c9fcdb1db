// Package contract_test holds black-box tests of the REST API over HTTP:
// every operation's success path and every error status openapi.json
// declares. Every response is validated against openapi.json by the client.
//
// By default each test starts its own server in-process. The tests that
// need nothing but HTTP also run against any running server (a container,
// another build): MOCKSERVER_URL=http://127.0.0.1:8080 go test ./contract_test/
// They assume the default fixture's keys; to check a server with keys of
// its own (the real service), use the conformance suite in conformance/.
package contract_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/sim"
)

// Well-known keys of the embedded default fixture.
const (
	keyAll      = mediamock.KeyAllScopes
	keyRead     = mediamock.KeyReadOnly
	keyGenerate = mediamock.KeyGenerateOnly
	keyPublish  = mediamock.KeyPublishOnly
	keyFree     = mediamock.KeyFreePlan
	keyBusiness = mediamock.KeyBusiness
	keyBroke    = mediamock.KeyNoCredits
	tokenOAuth  = mediamock.TokenOAuth
)

// env is one server under test and a validating client.
type env struct {
	t      *testing.T
	root   string // the server's root address
	client *http.Client
	srv    *mediamock.Server // nil for an external server
}

// clientContract is openapi.json for the client-side check.
var clientContract = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.Parse("openapi.json", mediamock.OpenAPIDocument)
})

func start(t *testing.T, opts ...func(*mediamock.Options)) *env {
	t.Helper()
	o := mediamock.Options{Clock: sim.ClockManual, DBPath: t.TempDir() + "/state.db",
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	for _, f := range opts {
		f(&o)
	}
	srv, err := mediamock.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return &env{t: t, root: srv.URL(), client: srv.Client(), srv: srv}
}

// testWriter sends the server's log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startShared starts a server in-process, or uses MOCKSERVER_URL when set.
// Tests that use it only read, or make what they read themselves.
func startShared(t *testing.T) *env {
	t.Helper()
	if u := os.Getenv("MOCKSERVER_URL"); u != "" {
		return &env{t: t, root: strings.TrimRight(u, "/"), client: http.DefaultClient}
	}
	return start(t)
}

// needsEngine skips a test that moves the clock of an external server.
func (e *env) needsEngine() {
	e.t.Helper()
	if e.srv == nil {
		e.t.Skip("moves the simulated clock of an in-process server")
	}
}

// advance moves the simulated clock.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.needsEngine()
	err := e.srv.Advance(d)
	require.NoError(e.t, err)
}

// result is a validated response.
type result struct {
	t      *testing.T
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r *result) JSON() map[string]any {
	r.t.Helper()
	var m map[string]any
	require.NoError(r.t, json.Unmarshal(r.Body, &m), "body: %s", r.Body)
	return m
}

// Decode decodes the body into v.
func (r *result) Decode(v any) {
	r.t.Helper()
	require.NoError(r.t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// Code is the error.code of an error response.
func (r *result) Code() string {
	r.t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	r.Decode(&e)
	require.NotEmpty(r.t, e.Error.Code, "an error object: %s", r.Body)
	require.NotEmpty(r.t, e.Error.Message, "an error object: %s", r.Body)
	return e.Error.Code
}

// Violations is details.violations of a validation_failed error.
func (r *result) Violations() []sim.Violation {
	r.t.Helper()
	var e struct {
		Error struct {
			Details struct {
				Violations []sim.Violation `json:"violations"`
			} `json:"details"`
		} `json:"error"`
	}
	r.Decode(&e)
	return e.Error.Details.Violations
}

// Fields are the fields of the violations.
func (r *result) Fields() []string {
	r.t.Helper()
	var out []string
	for _, v := range r.Violations() {
		out = append(out, v.Field)
	}
	return out
}

// req is a request to make.
type req struct {
	method, path, token string
	body                any               // JSON-encoded unless []byte
	contentType         string            // default application/json when there is a body
	header              map[string]string // more headers
}

// call makes a request to the API (paths are relative to /api/v1, or
// absolute when they start with /files or /_mock) and validates the
// response against openapi.json.
func (e *env) call(r req) *result {
	e.t.Helper()
	var body io.Reader
	if r.body != nil {
		switch b := r.body.(type) {
		case []byte:
			body = bytes.NewReader(b)
		case string:
			body = strings.NewReader(b)
		default:
			data, err := json.Marshal(b)
			require.NoError(e.t, err)
			body = bytes.NewReader(data)
		}
		if r.contentType == "" {
			r.contentType = "application/json"
		}
	}
	url := e.root + mediamock.BasePath + r.path
	if strings.HasPrefix(r.path, "/files/") || strings.HasPrefix(r.path, "/_mock") || strings.HasPrefix(r.path, "http") {
		url = r.path
		if !strings.HasPrefix(r.path, "http") {
			url = e.root + r.path
		}
	}
	hr, err := http.NewRequest(r.method, url, body)
	require.NoError(e.t, err)
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.contentType != "" {
		hr.Header.Set("Content-Type", r.contentType)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := e.client.Do(hr)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	res := &result{t: e.t, Status: resp.StatusCode, Header: resp.Header, Body: data}
	e.validate(hr, res)
	return res
}

// validate checks a response against openapi.json: a declared status, the
// declared headers and the body's schema. Responses outside any operation
// (unknown paths, other methods) must still carry the error object.
func (e *env) validate(hr *http.Request, res *result) {
	e.t.Helper()
	if !strings.HasPrefix(hr.URL.Path, mediamock.BasePath+"/") {
		return // files and the control API are outside the contract
	}
	c, err := clientContract()
	require.NoError(e.t, err)
	err = c.CheckExchange(hr, res.Status, res.Header, res.Body)
	if errors.Is(err, contract.ErrNoOperation) {
		require.Contains(e.t, []int{http.StatusNotFound, http.StatusMethodNotAllowed}, res.Status, "a request outside every operation: %s", res.Body)
		res.Code()
		return
	}
	if err != nil {
		e.t.Errorf("%s %s -> %d breaks openapi.json: %v\nbody: %s", hr.Method, hr.URL.Path, res.Status, err, truncate(res.Body))
	}
	if res.Status >= 400 {
		res.Code()
	}
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// get is a GET with a token.
func (e *env) get(token, path string) *result {
	e.t.Helper()
	return e.call(req{method: http.MethodGet, path: path, token: token})
}

// post is a JSON POST with a token.
func (e *env) post(token, path string, body any) *result {
	e.t.Helper()
	return e.call(req{method: http.MethodPost, path: path, token: token, body: body})
}

// expect fails the test unless the result has the status (and error code).
func (r *result) expect(status int, code ...string) *result {
	r.t.Helper()
	require.Equal(r.t, status, r.Status, "body: %s", truncate(r.Body))
	if len(code) > 0 {
		require.Equal(r.t, code[0], r.Code(), "body: %s", truncate(r.Body))
	}
	return r
}

func jsonPath(m map[string]any, path ...any) any {
	var cur any = m
	for _, p := range path {
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		default:
			panic(fmt.Sprintf("bad path element %v", p))
		}
	}
	return cur
}
