package mcpserver

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server-sent events: a call's progress and result without ids, a
// session's event streams with ids (kept for Last-Event-ID), the GET that
// opens a session's stream or resumes a POST's.

// streamRetry is the reconnection delay a dropped stream's close event
// asks of the client.
const streamRetry = 10 * time.Millisecond

// plainEvents answer a call as server-sent events without ids: its
// progress, then its result. The head goes with the first event, once
// the call has put what it adds to the head (a rate window) on it.
type plainEvents struct {
	w       http.ResponseWriter
	mu      sync.Mutex
	started bool
}

func (e *plainEvents) send(msg []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		e.started = true
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
		e.w.WriteHeader(http.StatusOK)
	}
	buf := make([]byte, 0, len(msg)+24)
	buf = append(append(append(buf, "event: message\ndata: "...), msg...), "\n\n"...)
	e.w.Write(buf)
	http.NewResponseController(e.w).Flush()
}

// events answers a session's POST on an event stream whose events carry
// ids (when the server keeps events): its requests run at once; a batch's
// answers go once all are in.
func (x *exchange) events() {
	s, b := x.s, x.b
	st := x.newStream(b.batch)
	st.maybePrime()
	var wg sync.WaitGroup
	for i := range b.msgs {
		m := &b.msgs[i]
		if !m.IsCall() {
			s.serve(&call{ctx: x.ctx, msg: m, peer: x.peer})
			continue
		}
		// Resumable answers outlive the request that asked: a client
		// that lost the stream reads them from the store.
		ctx := x.ctx
		if st.id != "" {
			ctx = context.WithoutCancel(ctx)
		}
		c := x.start(m, ctx)
		c.notify = st.send
		c.drop = st.drop
		if err := s.admit(c); err != nil {
			c.finish()
			st.send(c.refused(err).msg)
			continue
		}
		run := func() {
			defer c.finish()
			rep := s.run(c)
			st.send(rep.msg)
			rep.done()
		}
		if len(b.msgs) == 1 || c.sync() {
			run()
			continue
		}
		wg.Go(run)
	}
	wg.Wait()
	st.finish()
}

// A stream is a POST's event stream in a session. Its head, and its
// priming event, wait for its first message: a call puts what it adds to
// the head (a rate window) on it before then.
type stream struct {
	x       *exchange
	id      string // "" when the server keeps no events: no ids
	version string // the revision: close and priming events came with 2025-11-25
	mu      sync.Mutex
	next    int  // the next event's index
	started bool // the head went
	hold    bool // a batch: everything waits for the last answer
	held    bytes.Buffer
	primed  bool // a priming event goes with the head
	dropped bool
	done    chan struct{}
	// resumed is a GET that resumed the stream after it was dropped:
	// its next events go to it.
	resumed http.ResponseWriter
}

func (x *exchange) newStream(hold bool) *stream {
	st := &stream{x: x, hold: hold, done: make(chan struct{})}
	st.version = x.version
	if st.version == "" {
		st.version = v20250326
	}
	for _, m := range x.b.msgs {
		if m.Method == "initialize" && m.paramsErr == nil && m.p.version != "" {
			st.version = m.p.version
		}
	}
	if x.s.events != nil && x.sess != nil {
		st.id = crand.Text()
		x.sess.mu.Lock()
		if x.sess.streams == nil {
			x.sess.streams = map[string]*stream{}
		}
		x.sess.streams[st.id] = st
		x.sess.mu.Unlock()
	}
	h := x.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	if x.opened {
		h.Set("Mcp-Session-Id", x.sess.id)
	}
	return st
}

// maybePrime gives the stream a priming event (2025-11-25 and later, when
// the server keeps events): an id the client may resume from before any
// message.
func (st *stream) maybePrime() {
	if st.id == "" || st.version < v20251125 || st.version >= Sessionless {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.x.s.events.append(st.x.sess.id, st.id, nil)
	st.next++
	st.primed = true
}

// send sends a message on the stream: kept for resumption, written unless
// the stream was dropped.
func (st *stream) send(msg []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var id string
	if st.id != "" {
		st.x.s.events.append(st.x.sess.id, st.id, bytes.Clone(msg))
		id = st.id + "_" + strconv.Itoa(st.next)
		st.next++
	}
	if st.dropped {
		if st.resumed != nil {
			writeEvent(st.resumed, "message", id, "", msg)
		}
		return
	}
	st.write(appendEvent(nil, "message", id, "", msg))
}

// write writes an event, after the head (and the priming event) when it
// is the first. Called with st.mu.
func (st *stream) write(ev []byte) {
	if st.hold {
		st.held.Write(ev)
		return
	}
	if !st.started {
		st.started = true
		st.x.w.WriteHeader(http.StatusOK)
		if st.primed {
			st.x.w.Write(appendEvent(nil, "prime", st.id+"_0", "", nil))
		}
	}
	st.x.w.Write(ev)
	http.NewResponseController(st.x.w).Flush()
}

// drop ends the stream before the rest of its answers (a fault): from
// 2025-11-25 with a close event that tells the client when to resume.
// True when the client can resume it.
func (st *stream) drop() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.id == "" {
		return false
	}
	if st.version >= v20251125 {
		st.write(appendEvent(nil, "close", "", strconv.FormatInt(streamRetry.Milliseconds(), 10), nil))
	} else if !st.started && !st.hold {
		st.started = true
		st.x.w.WriteHeader(http.StatusOK)
		if st.primed {
			st.x.w.Write(appendEvent(nil, "prime", st.id+"_0", "", nil))
		}
	}
	st.dropped = true
	return true
}

// finish ends the stream once every request of it is answered.
func (st *stream) finish() {
	st.mu.Lock()
	if st.hold {
		st.x.w.WriteHeader(http.StatusOK)
		if st.primed {
			st.x.w.Write(appendEvent(nil, "prime", st.id+"_0", "", nil))
		}
		st.x.w.Write(st.held.Bytes())
	} else if !st.started {
		st.started = true
		st.x.w.WriteHeader(http.StatusOK)
	}
	close(st.done)
	st.mu.Unlock()
	if st.id != "" {
		st.x.sess.mu.Lock()
		delete(st.x.sess.streams, st.id)
		st.x.sess.mu.Unlock()
	}
}

// appendEvent appends a server-sent event.
func appendEvent(dst []byte, name, id, retry string, data []byte) []byte {
	dst = append(append(append(dst, "event: "...), name...), '\n')
	if id != "" {
		dst = append(append(append(dst, "id: "...), id...), '\n')
	}
	if retry != "" {
		dst = append(append(append(dst, "retry: "...), retry...), '\n')
	}
	dst = append(append(dst, "data: "...), data...)
	return append(dst, "\n\n"...)
}

func writeEvent(w http.ResponseWriter, name, id, retry string, data []byte) {
	w.Write(appendEvent(nil, name, id, retry, data))
	http.NewResponseController(w).Flush()
}

// get serves a session's GET: the stream for the server's own messages,
// or, with Last-Event-ID, a POST's stream resumed after that event.
func (x *exchange) get() {
	w, r, ss := x.w, x.r, x.sess
	sseHead := func() {
		h := w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
	}
	if len(r.Header["Last-Event-Id"]) == 0 {
		ss.mu.Lock()
		taken := ss.standalone
		ss.standalone = true
		ss.mu.Unlock()
		if taken {
			x.refuse(http.StatusConflict, "stream ID conflicts with ongoing stream")
			return
		}
		defer func() {
			ss.mu.Lock()
			ss.standalone = false
			ss.mu.Unlock()
		}()
		sseHead()
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": ok\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-x.ctx.Done():
		case <-ss.closed:
		}
		return
	}
	last := r.Header.Get("Last-Event-ID")
	streamID, idxText, ok := strings.Cut(last, "_")
	idx, err := strconv.Atoi(idxText)
	if !ok || strings.Contains(idxText, "_") || err != nil || idx < 0 {
		x.refuse(http.StatusBadRequest, fmt.Sprintf("malformed Last-Event-ID %q", last))
		return
	}
	if x.s.events == nil {
		x.refuse(http.StatusBadRequest, "stream replay unsupported")
		return
	}
	ss.mu.Lock()
	live := ss.streams[streamID]
	ss.mu.Unlock()
	if live != nil {
		// No event is sent on the stream while its past is replayed.
		live.mu.Lock()
		if !live.dropped || live.resumed != nil {
			live.mu.Unlock()
			x.refuse(http.StatusConflict, "stream ID conflicts with ongoing stream")
			return
		}
	}
	replay, err := x.s.events.after(ss.id, streamID, idx)
	if err != nil {
		if live != nil {
			live.mu.Unlock()
		}
		x.refuse(http.StatusBadRequest, "failed to replay events")
		return
	}
	sseHead()
	for _, data := range replay {
		idx++
		if len(data) > 0 {
			writeEvent(w, "message", streamID+"_"+strconv.Itoa(idx), "", data)
		}
	}
	if live == nil {
		return
	}
	select {
	case <-live.done:
		live.mu.Unlock()
		return
	default:
	}
	live.resumed = w
	live.mu.Unlock()
	select {
	case <-live.done:
	case <-x.ctx.Done():
	case <-ss.closed:
	}
	live.mu.Lock()
	if live.resumed == w {
		live.resumed = nil
	}
	live.mu.Unlock()
}
