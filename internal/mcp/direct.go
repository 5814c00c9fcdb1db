package mcp

import (
	"encoding/json"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/front"
)

// A tools/call inside a session is answered by the front itself, as one
// JSON body (which the transport allows as well as a stream), when nothing
// needs the SDK's stream: no progress token, no stream-drop fault to meet.
// The SDK's handling costs about five times the call itself (each of its
// ten or so JSON decodes of a call takes a 32 KB buffer); the call is the
// same function either way (Front.call), so the answer is the same. A
// client ends the call by ending its request, as the official SDKs do when
// they cancel.

// direct reports whether a request is a tools/call the front answers itself.
func (f *Front) direct(r *http.Request, msg peeked) bool {
	if msg.call == "" || msg.progress || r.Header.Get("Mcp-Protocol-Version") >= sessionlessVersion || !acceptsJSON(r) {
		return false
	}
	if r.Header.Get(fault.Header) != "" || f.env.Rules.HasKind(fault.MCPStreamDrop) {
		return false
	}
	return f.toolNamed(msg.call) != nil
}

func (f *Front) toolNamed(name string) *tool {
	for _, t := range f.tools {
		if t.def.Name == name {
			return t
		}
	}
	return nil
}

// serveCall answers a tools/call of a session.
func (f *Front) serveCall(w *front.Writer, r *http.Request, msg peeked) {
	t := f.toolNamed(msg.call)
	x := newExchange(w, f.env.View(r))
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: msg.call, Arguments: msg.args}}
	res := f.call(r.Context(), t, req, caller{authorization: r.Header.Get("Authorization"), view: x.view, x: x})
	x.finish()
	// The result as the SDK writes it (content, structuredContent,
	// isError), with the structured content spliced in as it is: it is
	// the operation's own JSON body, which marshalling would copy and
	// compact again.
	content, err := json.Marshal(res.Content)
	if err != nil {
		front.WriteError(w, err)
		return
	}
	data, _ := res.StructuredContent.(json.RawMessage)
	body := make([]byte, 0, len(content)+len(data)+96)
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, msg.id...)
	body = append(body, `,"result":{"content":`...)
	body = append(body, content...)
	if len(data) > 0 {
		body = append(append(body, `,"structuredContent":`...), data...)
	}
	if res.IsError {
		body = append(body, `,"isError":true`...)
	}
	body = append(body, "}}"...)
	front.WriteRaw(w, http.StatusOK, body)
}

// touch notes a request of a session, for its idle time.
func (f *Front) touch(id string) {
	now := f.env.WallClock()
	f.book.mu.Lock()
	if _, ok := f.book.owner[id]; ok {
		f.book.used[id] = now
	}
	f.book.mu.Unlock()
}

// sweep ends the sessions idle for sessionIdle, once a minute, until the
// server stops: the front keeps the sessions' idle times itself, since it
// answers some of their requests without the SDK.
func (f *Front) sweep() {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-f.env.Stop.Done():
			return
		case <-tick.C:
			f.endIdle(f.env.WallClock())
		}
	}
}

// endIdle ends the sessions whose last request is sessionIdle old at now.
func (f *Front) endIdle(now time.Time) int {
	f.book.mu.Lock()
	idle := map[string]bool{}
	for id, used := range f.book.used {
		if now.Sub(used) >= sessionIdle {
			idle[id] = true
		}
	}
	f.book.mu.Unlock()
	n := 0
	for ss := range f.server.Sessions() {
		if idle[ss.ID()] {
			if err := ss.Close(); err != nil {
				f.env.Log.Debug("end idle MCP session", "session", ss.ID(), "err", err)
			}
			n++
		}
	}
	f.book.mu.Lock()
	for id := range idle {
		delete(f.book.used, id)
		delete(f.book.owner, id)
	}
	f.book.mu.Unlock()
	return n
}
