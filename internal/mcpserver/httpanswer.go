package mcpserver

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
)

// How a POST's requests are answered over HTTP: as one JSON body (a
// sessionless request, a direct call or read) or as server-sent events
// (a call with a progress token).

// answer serves a POST that carries requests, and frames their answers.
func (x *exchange) answer() {
	s, b := x.s, x.b
	one := b.single()
	switch {
	case x.sessionless && one != nil && one.Method == "resources/read" && s.opts.DirectReads,
		!x.sessionless && one != nil && one.Method == "resources/read" && s.streamedRead(x.readURI(one)):
		x.direct(one)
	case x.sessionless && one != nil && one.Method == "tools/call" && s.opts.ProgressStreams && one.meta.progress != nil:
		x.progressCall(one)
	case x.sessionless:
		x.sessionlessJSON(one)
	case one != nil && one.Method == "tools/call" && x.directCall(one):
		if one.meta.progress != nil {
			x.progressCall(one)
		} else {
			x.directJSON(one)
		}
	default:
		x.events()
	}
}

// readURI is a read's URI, "" when its params are not a read's.
func (x *exchange) readURI(m *Message) string {
	if m.paramsErr != nil {
		return ""
	}
	return m.p.uri
}

// directCall reports whether a session's call answers as one JSON body
// (or, with a progress token, as events without ids): a call of a known
// tool whose arguments are an object, that no dropped stream may meet.
func (x *exchange) directCall(m *Message) bool {
	s := x.s
	if !s.opts.DirectCalls || (s.opts.MayDrop != nil && s.opts.MayDrop(x.r)) || odd(m) {
		return false
	}
	name, _ := named(m)
	_, known := s.tools[name]
	return known
}

// start serves a request: its context ends when the request is cancelled
// (notifications/cancelled) or its session ends (which cancels the
// requests of its peer).
func (x *exchange) start(m *Message, ctx context.Context) *call {
	c := &call{msg: m, peer: x.peer}
	if x.sess == nil {
		// A sessionless request stands alone: no notification can
		// cancel it; it ends with its HTTP request.
		c.ctx = ctx
		return c
	}
	c.start(ctx)
	return c
}

// sessionlessJSON answers a sessionless request as one JSON body; the
// revision gives some errors their own status (404 for a method not
// found, 400 for bad params or a revision not spoken).
func (x *exchange) sessionlessJSON(m *Message) {
	c := x.start(m, x.ctx)
	rep := x.s.serve(c)
	c.finish()
	defer rep.done()
	h := x.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	if rep.err == nil && m.Method == "tools/call" && x.s.opts.DirectCalls {
		writeRaw(x.w, http.StatusOK, rep.msg, false)
		return
	}
	h.Set("Content-Type", "application/json")
	if rep.err != nil {
		switch rep.err.Code {
		case CodeMethodNotFound:
			x.w.WriteHeader(http.StatusNotFound)
		case CodeInvalidParams, CodeUnsupportedProtocolVersion, CodeMissingRequiredClientCapabilities:
			x.w.WriteHeader(http.StatusBadRequest)
		}
		x.w.Write(rep.msg)
		return
	}
	x.w.Write(rep.msg)
}

// directJSON answers a session's call as one JSON body.
func (x *exchange) directJSON(m *Message) {
	c := x.start(m, x.ctx)
	rep := x.s.serve(c)
	c.finish()
	defer rep.done()
	if rep.err != nil {
		// An error of the protocol answers on a stream, as every
		// request of a session that is not a direct call.
		st := x.newStream(false)
		st.maybePrime()
		st.send(rep.msg)
		st.finish()
		return
	}
	writeRaw(x.w, http.StatusOK, rep.msg, false)
}

// progressCall answers a call that carries a progress token as events
// without ids: its progress notifications, then its result.
func (x *exchange) progressCall(m *Message) {
	c := x.start(m, x.ctx)
	defer c.finish()
	ev := &plainEvents{w: x.w}
	c.notify = ev.send
	rep := x.s.serve(c)
	defer rep.done()
	if rep.err != nil && !ev.started {
		if x.sessionless {
			x.w.Header().Set("Cache-Control", "no-cache, no-transform")
			x.w.Header().Set("Content-Type", "application/json")
			x.w.WriteHeader(map[bool]int{true: http.StatusNotFound, false: http.StatusBadRequest}[rep.err.Code == CodeMethodNotFound])
			x.w.Write(rep.msg)
			return
		}
		st := x.newStream(false)
		st.maybePrime()
		st.send(rep.msg)
		st.finish()
		return
	}
	ev.send(rep.msg)
}

// direct answers a read as one JSON body: a blob is encoded while it is
// read, so memory stays flat whatever the file's size. Its errors answer
// with HTTP 200.
func (x *exchange) direct(m *Message) {
	c := x.start(m, x.ctx)
	c.streams = true
	defer c.finish()
	rep := x.s.serve(c)
	defer rep.done()
	if rep.err != nil {
		writeRaw(x.w, http.StatusOK, rep.msg, false)
		return
	}
	h := x.w.Header()
	if x.sessionless {
		h.Set("Cache-Control", "no-cache, no-transform")
	}
	if rep.blob == nil {
		writeRaw(x.w, http.StatusOK, rep.msg, false)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.FormatInt(int64(len(rep.msg))+int64(base64.StdEncoding.EncodedLen(int(rep.size)))+int64(len(rep.tail)), 10))
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(rep.msg)
	enc := base64.NewEncoder(base64.StdEncoding, x.w)
	if _, err := io.CopyBuffer(enc, rep.blob, make([]byte, 48<<10)); err != nil {
		x.s.opts.Logger.Warn("MCP resource read cut short", "err", err)
		panic(http.ErrAbortHandler)
	}
	enc.Close()
	x.w.Write(rep.tail)
}
