package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode"
)

// Bridge serves stdio by relaying it to the Streamable HTTP endpoint of a
// running server (its /mcp), so that a process an agent starts and a test
// suite share one simulation. Its lines are read as ServeStdio reads them,
// and what is not a message, or a batch the revision refuses, is answered
// here; each message or batch goes as a POST with the session's headers
// (those of the sessionless revision for a sessionless message), and its
// answers, one JSON body or events, come back as lines. A stream that ends
// before its answers is resumed (Last-Event-ID). At the end of input,
// once every request read is answered, the session ends (DELETE).
func Bridge(ctx context.Context, in io.Reader, out io.Writer, endpoint string, client *http.Client) error {
	b := &bridge{endpoint: endpoint, client: client, stdio: stdioPeer{out: out}}
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	var readErr error
	for ctx.Err() == nil {
		var err error
		line, err = readLine(br, line[:0])
		if errors.Is(err, errLineTooLong) {
			b.stdio.reply(ID{}, &Error{Code: CodeInvalidRequest, html: true, Message: fmt.Sprintf("Invalid request: the line is longer than %d bytes, the most a message may be.", MaxStdioLine)})
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			b.line(ctx, bytes.Clone(msg))
		}
		if err != nil && !errors.Is(err, errLineTooLong) || errors.Is(err, io.EOF) {
			if err != nil && !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
	}
	b.calls.Wait()
	b.end()
	if ctx.Err() != nil {
		return nil
	}
	return readErr
}

type bridge struct {
	endpoint string
	client   *http.Client
	stdio    stdioPeer
	calls    sync.WaitGroup

	mu      sync.Mutex
	session string // Mcp-Session-Id, once initialize opened one
	version string // the revision initialize negotiated
}

// line relays one line: a request in a goroutine of its own (a call may
// wait: it must not hold up a cancellation after it), the handshake and
// notifications in order.
func (b *bridge) line(ctx context.Context, data []byte) {
	body, err := decodeBody(data, overStdio)
	if err != nil {
		err.html = true
		b.stdio.reply(ID{}, err)
		return
	}
	sessionless := ""
	for _, m := range body.msgs {
		if v := m.meta.version; v != "" {
			sessionless = v
		}
	}
	if body.batch {
		b.mu.Lock()
		version := b.version
		b.mu.Unlock()
		if sessionless >= Sessionless {
			version = sessionless
		}
		if version >= v20250618 {
			b.stdio.reply(ID{}, &Error{Code: CodeInvalidRequest, html: true,
				Message: fmt.Sprintf("Invalid request: JSON-RPC batching is not supported in %s and later (request version: %s).", v20250618, version)})
			return
		}
	}
	one := body.single()
	if one == nil || !one.IsCall() || one.Method == "initialize" {
		b.post(ctx, data, &body, sessionless)
		return
	}
	b.calls.Go(func() { b.post(ctx, data, &body, sessionless) })
}

// post sends a line's message(s) and writes their answers.
func (b *bridge) post(ctx context.Context, data []byte, body *body, sessionless string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.endpoint, bytes.NewReader(data))
	if err != nil {
		b.fail(body, err.Error())
		return
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if sessionless != "" {
		h.Set("Mcp-Protocol-Version", sessionless)
		if m := body.single(); m != nil {
			h.Set("Mcp-Method", m.Method)
			if name, ok := named(m); ok {
				h.Set("Mcp-Name", headerValue(name))
			}
		}
	} else {
		b.mu.Lock()
		if b.session != "" {
			h.Set("Mcp-Session-Id", b.session)
		}
		if b.version != "" {
			h.Set("Mcp-Protocol-Version", b.version)
		}
		b.mu.Unlock()
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.fail(body, err.Error())
		return
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		b.mu.Lock()
		b.session = id
		b.mu.Unlock()
	}
	pending := map[string]bool{}
	for _, m := range body.msgs {
		if m.IsCall() {
			pending[m.ID.raw] = true
		}
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
	case mediaType == "text/event-stream":
		last := b.events(resp.Body, pending)
		for len(pending) > 0 && last != "" && ctx.Err() == nil {
			// The stream ended before its answers: resume it.
			if last = b.resume(ctx, last, pending); last == "" {
				break
			}
		}
		if len(pending) > 0 {
			b.fail(body, "the server's event stream ended before the answer")
		}
	default:
		data, _ := io.ReadAll(resp.Body)
		if isMessage(data) {
			b.answer(bytes.TrimSpace(data), pending)
			return
		}
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(data, &e)
		b.fail(body, fmt.Sprintf("HTTP %d %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), cmpOr(e.Error.Message, strings.TrimSpace(string(data)))))
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// isMessage reports whether an HTTP body is JSON-RPC: a message, or a
// batch's answers.
func isMessage(data []byte) bool {
	data = bytes.TrimSpace(data)
	if bytes.HasPrefix(data, []byte("[")) {
		return true
	}
	var m struct {
		JSONRPC string `json:"jsonrpc"`
	}
	return json.Unmarshal(data, &m) == nil && m.JSONRPC == "2.0"
}

// answer writes a message (or a batch's answers) as a line, and notes the
// requests it answers; an initialize's answer tells the session's
// revision.
func (b *bridge) answer(msg []byte, pending map[string]bool) {
	body, err := decodeBody(msg, overStdio)
	if err == nil {
		for _, m := range body.msgs {
			if !m.request {
				delete(pending, m.ID.raw)
			}
		}
		if one := body.single(); one != nil && !one.request {
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" && Speaks(r.Result.ProtocolVersion) {
				b.mu.Lock()
				b.version = r.Result.ProtocolVersion
				b.mu.Unlock()
			}
		}
	}
	b.stdio.write(msg)
}

// events writes the messages of an event stream as lines, and returns the
// id of its last event ("" when its events carry none).
func (b *bridge) events(r io.Reader, pending map[string]bool) (last string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxStdioLine+1<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if len(bytes.TrimSpace(data)) > 0 {
				b.answer(bytes.TrimSpace(data), pending)
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case bytes.HasPrefix(line, []byte("id:")):
			last = string(bytes.TrimSpace(bytes.TrimPrefix(line, []byte("id:"))))
		}
	}
	return last
}

// resume reads the rest of a stream after its event last.
func (b *bridge) resume(ctx context.Context, last string, pending map[string]bool) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint, nil)
	if err != nil {
		return ""
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", last)
	b.mu.Lock()
	req.Header.Set("Mcp-Session-Id", b.session)
	if b.version != "" {
		req.Header.Set("Mcp-Protocol-Version", b.version)
	}
	b.mu.Unlock()
	resp, err := b.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	if next := b.events(resp.Body, pending); next != "" {
		return next
	}
	return ""
}

// fail answers a line's requests with an error of the bridge.
func (b *bridge) fail(body *body, why string) {
	for _, m := range body.msgs {
		if m.IsCall() {
			b.stdio.reply(m.ID, &Error{Code: CodeInternalError, Message: "mockserver bridge: " + why})
		}
	}
}

// end ends the session, if one was opened.
func (b *bridge) end() {
	b.mu.Lock()
	session, version := b.session, b.version
	b.mu.Unlock()
	if session == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, b.endpoint, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", session)
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if resp, err := b.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// headerValue is a name as a standard header carries it: as it is when
// it is printable ASCII, else in its Base64 form.
func headerValue(name string) string {
	for _, r := range name {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?="
		}
	}
	return name
}
