package mcp_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

var updateWire = flag.Bool("update-wire", false, "rewrite the transcripts of testdata/transcripts and testdata/list_page.golden")

// The transcripts hold the bytes of every answer of a scripted
// conversation with each MCP server (the service's /mcp and the control
// MCP server /_mock/mcp), in every protocol revision the servers speak,
// over Streamable HTTP and over stdio: the handshake, the lists, tool
// calls and tool errors, resource reads, prompts, ping, batches, the
// protocol's errors, the transport's (headers, sessions, versions), a
// call's progress events, a dropped stream and its resumption, a
// Mock-Fault call, the end of a session. They were recorded before the
// servers' framing was rewritten, and hold it to the same bytes.
//
// What is truly variable is normalised, and only that: the port of the
// listener, the ids of the SDK-era event streams (random: S1, S2, ... in
// the order they appear), and the order of the answers of one batch
// (the calls of a batch run at once: its answers are sorted by id).
// Bodies over 8 KB are kept as their length, their digest and their first
// bytes. A tools/list result keeps one tool of each server byte for byte
// (keptTools: how a tool is written is the framing's) and stands for the
// others with a marker: what they say is made from the documents (a new
// operation, a new fault kind) and is held by the generated reference
// pages (docs/reference/mcp-tools.md, control-mcp-tools.md), which read the
// same definitions.
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

func TestTranscripts(t *testing.T) {
	for _, server := range []string{"service", "control"} {
		for _, v := range revisions {
			for _, transport := range []string{"http", "stdio"} {
				name := fmt.Sprintf("%s-%s-%s", server, v, transport)
				t.Run(name, func(t *testing.T) {
					var got string
					if transport == "http" {
						got = httpTranscript(t, server, v)
					} else {
						got = stdioTranscript(t, server, v)
					}
					checkTranscript(t, name, got)
				})
			}
		}
	}
}

func checkTranscript(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "transcripts", name+".txt")
	if *updateWire {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestTranscripts -update-wire ./internal/mcp/ to record it")
	if string(want) != got {
		out := filepath.Join(t.TempDir(), name+".txt")
		os.WriteFile(out, []byte(got), 0o644)
		t.Errorf("the answers differ from %s (these answers: %s):\n%s", path, out, firstDifference(string(want), got))
	}
}

// firstDifference shows the lines around the first line that differs.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			from := max(0, i-6)
			ctx := strings.Join(w[from:i], "\n")
			return fmt.Sprintf("line %d:\n%s\n- %.600s\n+ %.600s", i+1, ctx, wl, gl)
		}
	}
	return ""
}

// transcriptServer is a server whose answers are the same from run to run:
// a fixed seed, the virtual clock (time moves only when a call waits), a
// wall clock that stands still. The control server's has a control token
// (its calls carry it); the service's has none, so that its requests may
// carry Mock-Fault headers.
func transcriptServer(t *testing.T, server string) *mediamock.Server {
	wall := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	return mediamock.RunT(t, func(o *mediamock.Options) {
		o.Seed = 7
		o.Clock = mediamock.ClockVirtual
		o.WallClock = func() time.Time { return wall }
		if server == "control" {
			o.ControlToken = "ct_transcripts"
		}
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
}

// transcript writes exchanges in a stable text form.
type transcript struct {
	t       *testing.T
	b       strings.Builder
	streams map[string]string // an event stream's id -> S1, S2, ...
	port    string
}

func (tr *transcript) step(name string) { fmt.Fprintf(&tr.b, "### %s\n", name) }

var eventID = regexp.MustCompile(`(?m)^id: ([A-Za-z0-9]+)_(-?\d+)$`)

// normal replaces what differs from run to run.
func (tr *transcript) normal(s string) string {
	if tr.port != "" {
		s = strings.ReplaceAll(s, "127.0.0.1:"+tr.port, "127.0.0.1:PORT")
	}
	s = keptTool(tr.t, s)
	return eventID.ReplaceAllStringFunc(s, func(m string) string {
		sub := eventID.FindStringSubmatch(m)
		return "id: " + tr.stream(sub[1]) + "_" + sub[2]
	})
}

// keptTools are the tools a transcript keeps whole: one of each server,
// of an operation whose arguments no document change is likely to touch.
var keptTools = map[string]bool{"get_account": true, "get_clock": true}

// otherTools stands for the other tools of a tools/list result.
const otherTools = `"(the other tools, as the documents make them: docs/reference)"`

// keptTool is s with the tools of a tools/list result but keptTools
// replaced by otherTools.
func keptTool(t *testing.T, s string) string {
	const key = `"tools":[`
	at := strings.Index(s, key)
	if at < 0 {
		return s
	}
	start := at + len(key) - 1 // the array
	dec := jsontext.NewDecoder(strings.NewReader(s[start:]))
	if _, err := dec.ReadToken(); err != nil { // [
		t.Fatalf("a tools/list result whose tools are not an array: %v", err)
	}
	var kept []string
	others := false
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			t.Fatalf("a tools/list result's tools: %v", err)
		}
		var tool struct{ Name string }
		if err := json.Unmarshal(v, &tool); err != nil {
			t.Fatalf("a tools/list result's tool %s: %v", v, err)
		}
		if keptTools[tool.Name] {
			kept = append(kept, string(v))
		} else {
			others = true
		}
	}
	if _, err := dec.ReadToken(); err != nil { // ]
		t.Fatal(err)
	}
	if others {
		kept = append(kept, otherTools)
	}
	end := start + int(dec.InputOffset())
	return s[:start] + "[" + strings.Join(kept, ",") + "]" + s[end:]
}

func (tr *transcript) stream(id string) string {
	if tr.streams == nil {
		tr.streams = map[string]string{}
	}
	if s, ok := tr.streams[id]; ok {
		return s
	}
	s := "S" + strconv.Itoa(len(tr.streams)+1)
	tr.streams[id] = s
	return s
}

// body writes a body: as it is up to 8 KB, its length, digest and head beyond.
func (tr *transcript) body(prefix string, data string) {
	data = tr.normal(data)
	if len(data) > 8<<10 {
		sum := sha256.Sum256([]byte(data))
		fmt.Fprintf(&tr.b, "%s[%d bytes, sha256 %x]\n%s%s...\n", prefix, len(data), sum, prefix, data[:512])
		return
	}
	for _, line := range strings.Split(data, "\n") {
		fmt.Fprintf(&tr.b, "%s%s\n", prefix, line)
	}
}

// --- HTTP ---

type exchange struct {
	method  string
	header  http.Header
	body    string
	headers []string // the request headers to show
}

type answer struct {
	status int
	header http.Header
	body   string
	err    error
}

// do sends a request and writes it and its answer; a stream (GET) is read
// until its first event and then left.
func (tr *transcript) do(srv *mediamock.Server, path string, x exchange) answer {
	tr.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if x.body != "" {
		body = strings.NewReader(x.body)
	}
	req, err := http.NewRequestWithContext(ctx, x.method, srv.URL()+path, body)
	require.NoError(tr.t, err)
	for k, v := range x.header {
		req.Header[k] = v
	}
	fmt.Fprintf(&tr.b, "> %s %s\n", x.method, path)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range req.Header {
			if !yield(k) {
				return
			}
		}
	}) {
		v := strings.Join(req.Header[k], ", ")
		if k == "Last-Event-Id" {
			stream, idx, _ := strings.Cut(v, "_")
			v = tr.stream(stream) + "_" + idx
		}
		fmt.Fprintf(&tr.b, "> %s: %s\n", k, tr.normal(v))
	}
	if x.body != "" {
		tr.body("> ", x.body)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(&tr.b, "< error\n\n")
		return answer{err: err}
	}
	defer resp.Body.Close()
	var data []byte
	if x.method == http.MethodGet && resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && req.Header.Get("Last-Event-ID") == "" {
		// The standalone stream stays open: its opening comment.
		buf := make([]byte, len(": ok\n\n"))
		n, _ := io.ReadFull(resp.Body, buf)
		data = buf[:n]
	} else {
		data, err = io.ReadAll(resp.Body)
	}
	fmt.Fprintf(&tr.b, "< %d\n", resp.StatusCode)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range resp.Header {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&tr.b, "< %s: %s\n", k, tr.normal(strings.Join(resp.Header[k], ", ")))
	}
	if resp.ContentLength < 0 {
		fmt.Fprintf(&tr.b, "< (length unknown: %s)\n", strings.Join(resp.TransferEncoding, ","))
	}
	if err != nil {
		fmt.Fprintf(&tr.b, "< (body cut short)\n")
	}
	text := string(data)
	uniqueNames(tr.t, text)
	if strings.HasPrefix(strings.TrimSpace(x.body), "[") {
		text = sortBatch(text)
	}
	tr.body("< ", text)
	tr.b.WriteString("\n")
	return answer{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

// uniqueNames holds every JSON answer (a body, an event's data, a line)
// to names given once in each object.
func uniqueNames(t *testing.T, answer string) {
	t.Helper()
	for _, part := range strings.Split(answer, "\n") {
		part = strings.TrimPrefix(part, "data: ")
		if v := jsontext.Value(part); json.Valid(v) {
			require.True(t, v.IsValid(), "a name given twice: %.300s", part)
		}
	}
}

// sortBatch orders the answers of a batch by their ids: the calls of a
// batch run at once, and answer in the order they end.
func sortBatch(body string) string {
	if strings.HasPrefix(body, "[") {
		var msgs []json.RawMessage
		if json.Unmarshal([]byte(body), &msgs) != nil {
			return body
		}
		sort.SliceStable(msgs, func(i, j int) bool { return idOf(msgs[i]) < idOf(msgs[j]) })
		out := make([]string, len(msgs))
		for i, m := range msgs {
			out[i] = string(m)
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	if !strings.Contains(body, "event: ") {
		return body
	}
	events := strings.SplitAfter(body, "\n\n")
	type ev struct {
		text string
		id   string
	}
	var evs []ev
	for _, e := range events {
		if e == "" {
			continue
		}
		data := ""
		for _, l := range strings.Split(e, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				data = d
			}
		}
		// Event ids count the events in the order they were sent: the
		// order is the calls', so the ids go.
		evs = append(evs, ev{eventID.ReplaceAllString(e, "id: BATCH_N"), idOf([]byte(data))})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].id < evs[j].id })
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.text)
	}
	return b.String()
}

func idOf(msg []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(msg, &m)
	return fmt.Sprintf("%20s", m.ID)
}

// serverOf names a transcript's server: its path, its credentials.
type serverOf struct {
	path   string
	key    string // the Authorization of its requests
	other  string // another credential
	tool   string // a tool without arguments
	bad    string // a call's name and arguments that the tool refuses
	read   string // a resource to read (the service's asset is found by the script)
	meta   bool
	prompt string
}

func serverNamed(name string) serverOf {
	if name == "control" {
		return serverOf{path: "/_mock/mcp", key: "Bearer ct_transcripts", other: "Bearer ct_nothing", tool: "get_clock",
			bad: `"name":"advance_clock","arguments":{"seconds":-5}`, read: "mediamock-control://faults", prompt: "rehearse_429_storm"}
	}
	return serverOf{path: "/mcp", key: "Bearer " + mediamock.KeyAllScopes, other: "Bearer " + mediamock.KeyBusiness, tool: "get_account",
		bad: `"name":"list_assets","arguments":{"limit":0}`, read: "mediamock://models"}
}

const sessionlessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"transcript","version":"1"}}`

// params adds the revision's _meta to a request's params (an object's
// members, without braces).
// A progress token in members ("_meta":{"progressToken":...} at their
// end) joins the revision's _meta.
func params(v, members string) string {
	if v < "2026" {
		return "{" + members + "}"
	}
	if before, token, ok := strings.Cut(members, `"_meta":{"progressToken":`); ok {
		return "{" + before + strings.Replace(sessionlessMeta, `"_meta":{`, `"_meta":{"progressToken":`+strings.TrimSuffix(token, "}")+",", 1) + "}"
	}
	if members == "" {
		return "{" + sessionlessMeta + "}"
	}
	return "{" + members + "," + sessionlessMeta + "}"
}

func request(id any, method, params string) string {
	idText, _ := json.Marshal(id)
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, idText, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idText, method, params)
}

func httpTranscript(t *testing.T, server, v string) string {
	srv := transcriptServer(t, server)
	s := serverNamed(server)
	tr := &transcript{t: t, port: strings.TrimPrefix(srv.URL()[strings.LastIndex(srv.URL(), ":"):], ":")}
	sessionless := v >= "2026"
	base := http.Header{"Authorization": {s.key}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	h := base.Clone()
	// headers are a request's: its revision's, its method and name.
	headers := func(method, name string) http.Header {
		x := h.Clone()
		if sessionless {
			x.Set("Mcp-Method", method)
			if name != "" {
				x.Set("Mcp-Name", name)
			}
		}
		return x
	}
	post := func(step string, hd http.Header, body string) answer {
		tr.step(step)
		return tr.do(srv, s.path, exchange{method: http.MethodPost, header: hd, body: body})
	}
	call := func(step string, id any, method, name, members string) answer {
		return post(step, headers(method, name), request(id, method, params(v, members)))
	}

	var sessionID string
	if !sessionless {
		init := call("initialize", 1, "initialize", "", `"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}`)
		sessionID = init.header.Get("Mcp-Session-Id")
		h.Set("Mcp-Session-Id", sessionID)
		h.Set("Mcp-Protocol-Version", v)
		post("initialized", h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	} else {
		h.Set("Mcp-Protocol-Version", v)
		call("server/discover", 1, "server/discover", "", "")
	}
	call("ping", 2, "ping", "", "")
	call("tools/list", 3, "tools/list", "", "")
	call("a tool call", 4, "tools/call", s.tool, `"name":"`+s.tool+`","arguments":{}`)
	name := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(s.bad, ",", 2)[0], `"name":"`), `"`)
	call("a tool error", 5, "tools/call", name, s.bad)
	call("an unknown tool", 6, "tools/call", "no_such_tool", `"name":"no_such_tool","arguments":{}`)
	call("arguments that are not an object", 7, "tools/call", s.tool, `"name":"`+s.tool+`","arguments":[1]`)
	if server == "service" {
		list := call("a completed asset", 8, "tools/call", "list_assets", `"name":"list_assets","arguments":{"limit":1,"status":"completed"}`)
		asset := regexp.MustCompile(`"data":\[\{"id":(\d+)`).FindStringSubmatch(list.body)
		require.NotNil(t, asset, list.body)
		uri := "mediamock://assets/" + asset[1]
		call("an asset read", 9, "resources/read", uri, `"uri":"`+uri+`"`)
		call("an asset not found", 10, "resources/read", "mediamock://assets/999999", `"uri":"mediamock://assets/999999"`)
		call("a call with a progress token", 11, "tools/call", "create_generation",
			`"name":"create_generation","arguments":{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse","wait_seconds":30},"_meta":{"progressToken":"p11"}`)
	} else {
		call("a call with a progress token", 11, "tools/call", "get_clock", `"name":"get_clock","arguments":{},"_meta":{"progressToken":"p11"}`)
	}
	call("a resource read", 12, "resources/read", s.read, `"uri":"`+s.read+`"`)
	call("an unknown resource", 13, "resources/read", "mediamock://nothing", `"uri":"mediamock://nothing"`)
	call("resources/list", 14, "resources/list", "", "")
	call("resources/templates/list", 15, "resources/templates/list", "", "")
	call("prompts/list", 16, "prompts/list", "", "")
	if s.prompt != "" {
		call("prompts/get", 17, "prompts/get", s.prompt, `"name":"`+s.prompt+`","arguments":{"count":"3"}`)
	}
	call("an unknown prompt", 18, "prompts/get", "no_such_prompt", `"name":"no_such_prompt"`)
	call("logging/setLevel", 19, "logging/setLevel", "", `"level":"debug"`)
	call("an unknown method", 20, "no/such/method", "", "")
	post("params that are not an object", headers("tools/call", ""), `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":"x"}`)
	post("a call without params", headers("resources/read", ""), `{"jsonrpc":"2.0","id":22,"method":"resources/read"}`)
	post("a string id", headers("ping", ""), request("twenty-three", "ping", params(v, "")))
	post("notifications/cancelled", headers("notifications/cancelled", ""), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	post("not JSON", headers("ping", ""), `{"jsonrpc":`)
	post("trailing data", headers("ping", ""), request(24, "ping", "")+" x")
	post("an object id", headers("ping", ""), `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`)
	post("neither request nor response", headers("ping", ""), `{"jsonrpc":"2.0","id":25}`)
	post("an empty batch", headers("ping", ""), `[]`)
	post("a batch", h, "["+strings.Join([]string{
		request(30, "ping", params(v, "")),
		request(31, "tools/list", params(v, "")),
		request(32, "tools/call", params(v, `"name":"`+s.tool+`","arguments":{}`)),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}, ",")+"]")
	// The transport's errors.
	ct := headers("ping", "")
	ct.Set("Content-Type", "text/plain")
	post("a Content-Type not JSON", ct, request(40, "ping", params(v, "")))
	acc := headers("ping", "")
	acc.Set("Accept", "application/json")
	post("an Accept without event streams", acc, request(41, "ping", params(v, "")))
	acc.Set("Accept", "text/event-stream")
	post("an Accept without JSON", acc, request(42, "ping", params(v, "")))
	if !sessionless {
		no := headers("tools/list", "")
		no.Del("Mcp-Session-Id")
		post("no session", no, request(43, "tools/list", params(v, "")))
		unknown := headers("tools/list", "")
		unknown.Set("Mcp-Session-Id", "mcs_0000000000000000")
		post("an unknown session", unknown, request(44, "tools/list", params(v, "")))
		other := headers("tools/list", "")
		other.Set("Authorization", s.other)
		post("another's session", other, request(45, "tools/list", params(v, "")))
	} else {
		miss := headers("tools/call", s.tool)
		miss.Del("Mcp-Method")
		post("no Mcp-Method", miss, request(43, "tools/call", params(v, `"name":"`+s.tool+`","arguments":{}`)))
		wrong := headers("tools/call", "another")
		post("another Mcp-Name", wrong, request(44, "tools/call", params(v, `"name":"`+s.tool+`","arguments":{}`)))
		b64 := headers("tools/call", "=?base64?"+base64.StdEncoding.EncodeToString([]byte(s.tool))+"?=")
		post("Mcp-Name in Base64", b64, request(45, "tools/call", params(v, `"name":"`+s.tool+`","arguments":{}`)))
		post("no _meta", headers("tools/list", ""), request(46, "tools/list", "{}"))
		init := headers("initialize", "")
		post("initialize", init, request(47, "initialize", params(v, `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}`)))
	}
	for _, version := range []string{"1900-01-01", "2099-01-01"} {
		old := headers("tools/list", "")
		old.Set("Mcp-Protocol-Version", version)
		post("a version not spoken: "+version, old, request(48, "tools/list", params(v, "")))
	}
	anon := headers("tools/list", "")
	anon.Del("Authorization")
	post("no credential", anon, request(49, "tools/list", params(v, "")))
	if server == "service" {
		unavailable := headers("tools/list", "")
		unavailable.Set("Mock-Fault", "mcp_unavailable")
		post("Mock-Fault: mcp_unavailable", unavailable, request(50, "tools/list", params(v, "")))
		limited := headers("tools/call", s.tool)
		limited.Set("Mock-Fault", "status; status=429")
		post("Mock-Fault: status 429 on a call", limited, request(51, "tools/call", params(v, `"name":"`+s.tool+`","arguments":{}`)))
		_, err := srv.AddFault(mediamock.FaultSpec{Kind: "mcp_stream_drop", Operation: "getAccount", First: 1})
		require.NoError(t, err)
		dropped := call("a dropped stream", 52, "tools/call", s.tool, `"name":"`+s.tool+`","arguments":{}`)
		if m := eventID.FindStringSubmatch(dropped.body); m != nil {
			resume := h.Clone()
			resume.Del("Content-Type")
			resume.Set("Accept", "text/event-stream")
			resume.Set("Last-Event-ID", m[0][len("id: "):])
			tr.step("its resumption")
			tr.do(srv, s.path, exchange{method: http.MethodGet, header: resume})
		}
		srv.ClearFaults()
	}
	if !sessionless {
		get := h.Clone()
		get.Del("Content-Type")
		get.Set("Accept", "text/event-stream")
		tr.step("the standalone stream")
		tr.do(srv, s.path, exchange{method: http.MethodGet, header: get})
		if server == "service" {
			expire := headers("ping", "")
			expire.Set("Mock-Fault", "mcp_session_expire")
			post("Mock-Fault: mcp_session_expire", expire, request(53, "ping", params(v, "")))
			// A session of its own for the rest.
			h.Del("Mcp-Session-Id")
			h.Del("Mcp-Protocol-Version")
			init := call("initialize again", 54, "initialize", "", `"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}`)
			h.Set("Mcp-Protocol-Version", v)
			h.Set("Mcp-Session-Id", init.header.Get("Mcp-Session-Id"))
			post("initialized", h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
	}
	del := h.Clone()
	del.Del("Content-Type")
	tr.step("DELETE")
	tr.do(srv, s.path, exchange{method: http.MethodDelete, header: del})
	call("after DELETE", 60, "ping", "", "")
	tr.step("DELETE again")
	tr.do(srv, s.path, exchange{method: http.MethodDelete, header: del})
	tr.step("PUT")
	tr.do(srv, s.path, exchange{method: http.MethodPut, header: del, body: request(61, "ping", "")})
	return tr.b.String()
}

// --- stdio ---

type stdioPeer struct {
	tr   *transcript
	in   *io.PipeWriter
	out  *bufio.Reader
	errc chan error
}

// send writes a line and, when want names ids, reads lines until each of
// them is answered (and count more lines without ids).
func (p *stdioPeer) send(step, line string, want []string, bare int) []string {
	p.tr.t.Helper()
	p.tr.step(step)
	p.tr.body("> ", line)
	_, err := io.WriteString(p.in, line+"\n")
	require.NoError(p.tr.t, err)
	pending := map[string]bool{}
	for _, id := range want {
		pending[id] = true
	}
	var got []string
	for len(pending) > 0 || bare > 0 {
		l, err := p.out.ReadString('\n')
		require.NoError(p.tr.t, err, "waiting for %v after %s", want, step)
		got = append(got, strings.TrimSuffix(l, "\n"))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal([]byte(l), &m)
		if len(m.ID) > 0 && string(m.ID) != "null" && m.Method == "" {
			delete(pending, string(m.ID))
		} else if !strings.HasPrefix(strings.TrimSpace(l), "[") && m.Method == "" {
			bare--
		} else if strings.HasPrefix(strings.TrimSpace(l), "[") {
			var batch []json.RawMessage
			json.Unmarshal([]byte(l), &batch)
			for _, b := range batch {
				json.Unmarshal(b, &m)
				delete(pending, string(m.ID))
			}
		}
	}
	for _, l := range got {
		uniqueNames(p.tr.t, l)
		if strings.HasPrefix(l, "[") {
			l = sortBatch(l)
		}
		p.tr.body("< ", l)
	}
	p.tr.b.WriteString("\n")
	return got
}

func stdioTranscript(t *testing.T, server, v string) string {
	srv := transcriptServer(t, server)
	s := serverNamed(server)
	tr := &transcript{t: t, port: strings.TrimPrefix(srv.URL()[strings.LastIndex(srv.URL(), ":"):], ":")}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{tr: tr, in: inW, out: bufio.NewReader(outR), errc: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var err error
		if server == "control" {
			err = srv.ServeControlMCP(ctx, inR, outW, "ct_transcripts")
		} else {
			err = srv.ServeMCP(ctx, inR, outW, mediamock.KeyAllScopes)
		}
		outW.Close()
		p.errc <- err
	}()
	sessionless := v >= "2026"
	call := func(step string, id any, method, members string) {
		idText, _ := json.Marshal(id)
		p.send(step, request(id, method, params(v, members)), []string{string(idText)}, 0)
	}
	if !sessionless {
		call("initialize", 1, "initialize", `"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}`)
		p.send("initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 0)
	} else {
		call("server/discover", 1, "server/discover", "")
	}
	call("ping", 2, "ping", "")
	call("tools/list", 3, "tools/list", "")
	call("a tool call", 4, "tools/call", `"name":"`+s.tool+`","arguments":{}`)
	call("a tool error", 5, "tools/call", s.bad)
	call("an unknown tool", 6, "tools/call", `"name":"no_such_tool","arguments":{}`)
	call("arguments that are not an object", 7, "tools/call", `"name":"`+s.tool+`","arguments":[1]`)
	if server == "service" {
		// The asset of the HTTP transcript: the same seed makes the same library.
		got := p.send("a completed asset", request(8, "tools/call", params(v, `"name":"list_assets","arguments":{"limit":1,"status":"completed"}`)), []string{"8"}, 0)
		asset := regexp.MustCompile(`"data":\[\{"id":(\d+)`).FindStringSubmatch(strings.Join(got, "\n"))
		require.NotNil(t, asset, got)
		call("an asset read", 9, "resources/read", `"uri":"mediamock://assets/`+asset[1]+`"`)
		call("an asset not found", 10, "resources/read", `"uri":"mediamock://assets/999999"`)
		p.send("a call with a progress token", request(11, "tools/call", params(v, `"name":"create_generation","arguments":{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse","wait_seconds":30},"_meta":{"progressToken":"p11"}`)), []string{"11"}, 0)
	}
	call("a resource read", 12, "resources/read", `"uri":"`+s.read+`"`)
	call("an unknown resource", 13, "resources/read", `"uri":"mediamock://nothing"`)
	call("resources/list", 14, "resources/list", "")
	call("resources/templates/list", 15, "resources/templates/list", "")
	call("prompts/list", 16, "prompts/list", "")
	if s.prompt != "" {
		call("prompts/get", 17, "prompts/get", `"name":"`+s.prompt+`","arguments":{"count":"3"}`)
	}
	call("an unknown prompt", 18, "prompts/get", `"name":"no_such_prompt"`)
	call("logging/setLevel", 19, "logging/setLevel", `"level":"debug"`)
	call("an unknown method", 20, "no/such/method", "")
	p.send("params that are not an object", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":"x"}`, []string{"21"}, 0)
	p.send("a call without params", `{"jsonrpc":"2.0","id":22,"method":"resources/read"}`, []string{"22"}, 0)
	p.send("a string id", request("twenty-three", "ping", params(v, "")), []string{`"twenty-three"`}, 0)
	p.send("notifications/cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, nil, 0)
	p.send("not JSON", `{"jsonrpc":`, nil, 1)
	p.send("trailing data", request(24, "ping", "")+" x", nil, 1)
	p.send("an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, 1)
	p.send("a number id out of range", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, nil, 1)
	p.send("neither request nor response", `{"jsonrpc":"2.0","id":25}`, nil, 1)
	p.send("an empty batch", `[]`, nil, 1)
	p.send("a version not spoken", request(26, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`), []string{"26"}, 0)
	if v < "2025-06-18" {
		p.send("a batch", "["+strings.Join([]string{
			request(30, "ping", params(v, "")),
			request(31, "tools/list", params(v, "")),
			request(32, "tools/call", params(v, `"name":"`+s.tool+`","arguments":{}`)),
		}, ",")+"]", []string{"30", "31", "32"}, 0)
	}
	call("the last request", 33, "ping", "")
	inW.Close()
	require.NoError(t, <-p.errc)
	rest, _ := io.ReadAll(p.out)
	if len(rest) > 0 {
		tr.step("after the end of input")
		tr.body("< ", string(rest))
	}
	return tr.b.String()
}
