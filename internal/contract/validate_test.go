package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/problem"
)

func parseFile(t testing.TB, name string) *Contract {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	c, err := Parse(name, data)
	require.NoError(t, err)
	return c
}

// validateCase is one call of an operation: its parameters, and a body of
// a Content-Type (chunked: without a declared length; limit: capped).
type validateCase struct {
	op      string
	vars    map[string]string
	query   url.Values
	ct      string
	body    string
	chunked bool
	limit   int64
}

func (tc validateCase) String() string {
	return fmt.Sprintf("%s vars=%v query=%v ct=%q chunked=%v limit=%d body=%.200q", tc.op, tc.vars, tc.query, tc.ct, tc.chunked, tc.limit, tc.body)
}

// errorText is an error as the wire shows it (nil: "").
func errorText(err error) string {
	if err == nil {
		return ""
	}
	b, _ := json.Marshal(problem.AsError(err))
	return string(b)
}

// ownFiles recognizes the test's own file addresses.
func ownFiles(s string) bool { return strings.HasPrefix(s, "http://127.0.0.1/files/") }

// same holds Validate to the oracle on one case, through each way a front
// hands it the input: a body read from a stream (REST), an HTTP request
// (ValidateRequest), a tool call's arguments (MCP, for a JSON object).
func same(t *testing.T, c *Contract, tc validateCase) {
	t.Helper()
	for _, own := range []func(string) bool{nil, ownFiles} {
		want := errorText(c.oracleValidateRequest(oracleRequest([]byte(tc.body), tc.ct, tc.chunked, tc.limit), tc.op, tc.vars, tc.query, own))

		r := oracleRequest([]byte(tc.body), tc.ct, tc.chunked, tc.limit)
		body := c.ReadBody(tc.op, tc.ct, r.Body, r.ContentLength)
		got := errorText(c.Validate(tc.op, &Input{Path: tc.vars, Query: tc.query, Body: body}, own))
		require.Equal(t, want, got, "read from a stream, own=%v: %s", own != nil, tc)

		if own == nil {
			r := oracleRequest([]byte(tc.body), tc.ct, tc.chunked, tc.limit)
			got := errorText(c.ValidateRequest(r, tc.op, tc.vars, tc.query))
			require.Equal(t, want, got, "as an HTTP request: %s", tc)
		}

		var args map[string]json.RawMessage
		if rules := c.inputs[tc.op]; rules.body != nil && takesJSON(rules.body, tc.ct) && tc.ct == "application/json" && tc.limit == 0 &&
			json.Unmarshal([]byte(tc.body), &args) == nil && args != nil {
			// As MCP makes it: the object of the arguments, as sent.
			got := errorText(c.Validate(tc.op, &Input{Path: tc.vars, Query: tc.query, Body: c.ArgumentsBody([]byte(tc.body))}, own))
			require.Equal(t, want, got, "as a tool call's arguments, own=%v: %s", own != nil, tc)
		}
	}
}

// paramValues are values at and around the rules of the documents'
// parameters.
var paramValues = []string{"", "0", "1", "-1", "2", "20", "50", "51", "55", "56", "55.5", "-0", "01", "+1", "1.0", "1e1", " 1",
	"9223372036854775807", "9223372036854775808", "true", "abc", "image", "IMAGE", "queued", "voice", "sbx_1_4f0c9a2e", "flt_1",
	strings.Repeat("x", 200), strings.Repeat("x", 201), strings.Repeat("é", 1025), "\xff"}

// TestValidateIsTheRequestValidator holds Validate to kin-openapi's request
// validator (the oracle) on every parameter of every operation of both
// documents at values around its rules, missing, empty and repeated, and
// on bodies: valid, broken in every way the schemas say, not JSON, of
// another media type, empty, over a cap, and multipart forms.
func TestValidateIsTheRequestValidator(t *testing.T) {
	for _, name := range []string{"../../openapi.json", "../../control.json"} {
		c := parseFile(t, name)
		n := 0
		for _, op := range c.Operations() {
			route := c.routes[op.ID]
			rules := c.inputs[op.ID]
			valid := map[string]string{}
			for _, p := range rules.params {
				if p.p.In == "path" {
					valid[p.p.Name] = "1"
					if p.schema != nil && len(p.schema.Enum) > 0 {
						valid[p.p.Name] = fmt.Sprint(p.schema.Enum[0])
					}
				}
			}
			body, ct := "", ""
			if rules.body != nil && takesJSON(rules.body, "application/json") {
				body, ct = "{}", "application/json"
			}
			for _, p := range rules.params {
				values := slices.Clone(paramValues)
				if p.schema != nil {
					for _, e := range p.schema.Enum {
						values = append(values, fmt.Sprint(e))
					}
				}
				for _, v := range values {
					vars, query := maps.Clone(valid), url.Values{}
					if p.p.In == "path" {
						vars[p.p.Name] = v
					} else {
						query[p.p.Name] = []string{v}
					}
					same(t, c, validateCase{op: op.ID, vars: vars, query: query, ct: ct, body: body})
					n++
				}
				if p.p.In == "path" {
					vars := maps.Clone(valid)
					delete(vars, p.p.Name)
					same(t, c, validateCase{op: op.ID, vars: vars, query: url.Values{}, ct: ct, body: body})
				} else {
					for _, vs := range [][]string{{}, {"", "2"}, {"1", "abc"}, {"abc", "1"}, {"", ""}} {
						same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{p.p.Name: vs}, ct: ct, body: body})
					}
				}
			}
			same(t, c, validateCase{op: op.ID, vars: nil, query: nil, ct: ct, body: body})
			if route.Operation.RequestBody == nil {
				continue
			}
			for _, b := range bodyCorpus(op.ID) {
				for _, ct := range []string{"application/json", "application/json; charset=utf-8", "", "text/plain", "application/xml", "APPLICATION/JSON"} {
					same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{}, ct: ct, body: b})
					n++
				}
				same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{}, ct: "application/json", body: b, chunked: true})
				same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{}, ct: "application/json", body: b, limit: 20})
				same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{"limit": {"abc"}}, ct: "application/json", body: b})
			}
			for _, f := range formCorpus(t) {
				same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{}, ct: f.ct, body: f.body})
				same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{}, ct: f.ct, body: f.body, chunked: true})
				same(t, c, validateCase{op: op.ID, vars: valid, query: url.Values{}, ct: f.ct, body: f.body, limit: 100})
				n++
			}
		}
		t.Logf("%s: %d cases", name, n)
	}
}

// bodyCorpus are JSON bodies for an operation: the generic shapes, and
// what its schema says for the service's.
func bodyCorpus(op string) []string {
	out := []string{"", " ", "{}", "[]", "null", `"s"`, "1", "{", `{"a":1} x`, `{"a":}`, `{"a":1e400}`, "\xff", `{"x":1}`,
		`{"duration":"30s"}`, `{"duration":"1h","extra":true}`, `{"mode":"virtual"}`, `{"count":1,"modality":"video"}`,
		`{"kind":"latency","operation":"getAccount","latency_ms":10}`, `{"name":"s","seed":"x"}`}
	switch op {
	case "createGeneration":
		out = append(out,
			`{"modality":"image","model_id":"imagen-4","prompt":"a kite"}`,
			`{"modality":"image","model_id":"imagen-4","prompt":"x","count":9}`,
			`{"modality":"image","model_id":"imagen-4","prompt":"x","count":1.0}`,
			`{"modality":"image","model_id":"imagen-4","prompt":"x","count":1.5}`,
			`{"modality":"image","model_id":"imagen-4","prompt":"x","extra":1}`,
			`{"modality":"gif","model_id":"","prompt":"","aspect_ratio":"wide","language":"english"}`,
			`{"modality":"image","model_id":"m","prompt":"p","reference_image_urls":["http://127.0.0.1/files/a/1.png","http://example.com/x.png","https://x/y.png"]}`,
			`{"modality":"image","model_id":"m","prompt":"p","reference_asset_ids":[1,2,3,4,5],"wait_seconds":56}`,
			`{"modality":1,"model_id":["x"],"prompt":{"a":1},"generate_audio":"yes"}`,
			`{"MODALITY":"image"}`)
	case "createEncoreCreation":
		out = append(out,
			`{"effect":"golden-hour","image_url":"https://example.com/a.jpg"}`,
			`{"effect":"golden-hour"}`,
			`{"effect":"golden-hour","image_url":"https://example.com/a.jpg","asset_id":1}`,
			`{"effect":"","image_url":"ftp://x","asset_id":0,"character_id":-1}`,
			`{"effect":"golden-hour","image_url":"http://127.0.0.1/files/a/1.png"}`,
			`{"image_url":"http://example.com/a.jpg","asset_id":1,"extra":2}`)
	case "createPublication":
		out = append(out,
			`{"asset_ids":[16],"caption":"hi","platforms":["instagram"],"scheduled_at":"2026-02-01T00:00:00Z"}`,
			`{"asset_ids":[16],"caption":"hi"}`,
			`{"asset_ids":[16],"caption":"hi","platforms":["instagram"],"social_account_ids":[1]}`,
			`{"asset_ids":[],"caption":1,"platforms":["myspace"],"scheduled_at":"tomorrow","options":{"title":1,"x":2}}`)
	case "createUpload":
		out = append(out,
			`{"image_url":"data:image/png;base64,iVBORw0KGgo=","title":"x"}`,
			`{"image_url":"http://127.0.0.1/files/a/1.png"}`,
			`{"image_url":"http://example.com/a.png","title":"`+strings.Repeat("t", 161)+`"}`,
			`{"image_url":""}`)
	}
	return out
}

type formCase struct{ ct, body string }

// formCorpus are multipart forms: well made and broken.
func formCorpus(t *testing.T) []formCase {
	part := func(name, filename, ct, data string) string {
		h := `Content-Disposition: form-data; name="` + name + `"`
		if filename != "" {
			h += `; filename="` + filename + `"`
		}
		if ct != "" {
			h += "\r\nContent-Type: " + ct
		}
		return "--x\r\n" + h + "\r\n\r\n" + data + "\r\n"
	}
	const end = "--x--\r\n"
	const ct = "multipart/form-data; boundary=x"
	var b bytes.Buffer
	_, err := io.WriteString(&b, part("file", "a.png", "image/png", "\x89PNG...")+end)
	require.NoError(t, err)
	return []formCase{
		{ct, part("file", "a.png", "image/png", "\x89PNG") + end},
		{ct, part("title", "", "", "fuzz") + part("file", "a.png", "image/png", "\x89PNG") + end},
		{ct, part("title", "", "", strings.Repeat("t", 161)) + end},
		{ct, part("title", "t.txt", "", strings.Repeat("t", 161)) + end},
		{ct, part("image_url", "", "", "http://example.com/a.png") + end},
		{ct, part("image_url", "", "", "http://127.0.0.1/files/a/1.png") + end},
		{ct, part("image_url", "", "", "") + end},
		{ct, part("image_url", "u.txt", "", "http://example.com/a.png") + end},
		{ct, part("title", "", "application/json", `"a title"`) + end},
		{ct, part("title", "", "application/json", `not json`) + end},
		{ct, part("title", "", "image/png", "x") + end},
		{ct, part("title", "", "text/plain; charset=utf-8", "x") + end},
		{ct, part("file", "", "", "bytes without a file name") + end},
		{ct, part("title", "", "", "a") + part("title", "", "", "b") + end},
		{ct, part("unknown", "", "", "x") + part("file", "a.png", "image/png", "\x89PNG") + end},
		{ct, part("file", "a.png", "image/png", "\x89PNG") + part("unknown", "", "", "x") + end},
		{ct, part("title", "", "", "x")},                                     // no end
		{ct, part("title", "", "", "x") + "--x\r\nContent-Disposition: for"}, // cut in a header
		{ct, part("unknown", "", "", "x") + "--x\r\nContent-Disposition: for"},
		{ct, "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n\r\n\x89PNG"}, // cut in a file
		{ct, "garbage"},
		{ct, ""},
		{ct, end},
		{"multipart/form-data", part("title", "", "", "x") + end},
		{"multipart/form-data; boundary=", part("title", "", "", "x") + end},
		{"multipart/form-data; boundary", part("title", "", "", "x") + end},
		{"multipart/form-data; boundary=y", part("title", "", "", "x") + end},
		{"multipart/mixed; boundary=x", part("title", "", "", "x") + end},
		{ct, b.String() + "trailing bytes after the form"},
	}
}

// FuzzValidateIsTheRequestValidator holds Validate to kin-openapi's
// request validator on any body and query of the service's creations.
func FuzzValidateIsTheRequestValidator(f *testing.F) {
	c := parseFile(f, "../../openapi.json")
	ops := []string{"createGeneration", "createUpload", "createEncoreCreation", "createPublication", "listAssets", "getGeneration"}
	cts := []string{"application/json", "multipart/form-data; boundary=x", "", "text/plain", "application/json; charset=utf-8"}
	for i, op := range ops {
		for _, b := range bodyCorpus(op) {
			f.Add(uint8(i), uint8(0), b, "limit=20")
		}
	}
	f.Add(uint8(1), uint8(1), "--x\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nfuzz\r\n--x--\r\n", "")
	for op, bodies := range boundedCorpus() {
		if i := slices.Index(ops, op); i >= 0 {
			for _, b := range bodies {
				f.Add(uint8(i), uint8(0), b, "")
			}
		}
	}
	f.Fuzz(func(t *testing.T, op, ct uint8, body, rawQuery string) {
		query, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		same(t, c, validateCase{op: ops[int(op)%len(ops)], vars: map[string]string{"id": "1"}, query: query, ct: cts[int(ct)%len(cts)], body: body})
	})
}

// A body is decoded once: a body that ReadBody read, or that ArgumentsBody
// made, counts one decode, and the validator judges the value without
// decoding it again.
func TestBodiesAreDecodedOnce(t *testing.T) {
	c := parseFile(t, "../../openapi.json")
	for _, body := range []string{`{"modality":"image","model_id":"imagen-4","prompt":"a kite"}`, `{"modality":"image"}`, `{"modality":`,
		`{"effect":"golden-hour","image_url":"https://example.com/a.jpg","asset_id":1,"count":1}`} {
		op := "createGeneration"
		if strings.Contains(body, "effect") {
			op = "createEncoreCreation"
		}
		before := c.Decodes()
		b := c.ReadBody(op, "application/json", strings.NewReader(body), int64(len(body)))
		_ = c.Validate(op, &Input{Body: b}, nil)
		assert.Equal(t, uint64(1), c.Decodes()-before, body)
	}
	before := c.Decodes()
	b := c.ArgumentsBody([]byte(`{"modality":"image","count":9}`))
	in := &Input{Body: b}
	require.Error(t, c.Validate("createGeneration", in, nil))
	assert.Equal(t, uint64(1), c.Decodes()-before)
	// The strings of a body share its bytes.
	m := in.Body.Value.(map[string]any)
	assert.Equal(t, "image", m["modality"])
	assert.Equal(t, float64(9), m["count"])
}
