package mediamock

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// JournalEntry is one recorded request.
type JournalEntry struct {
	ID                    string  `json:"id"`
	Time                  string  `json:"time"`
	SimTime               string  `json:"sim_time"`
	Method                string  `json:"method"`
	Path                  string  `json:"path"`
	Query                 string  `json:"query,omitempty"`
	Operation             string  `json:"operation,omitempty"`
	Status                int     `json:"status"`
	ErrorCode             string  `json:"error_code,omitempty"`
	WorkspaceID           uint64  `json:"workspace_id,omitempty"`
	DurationMS            float64 `json:"duration_ms"`
	InjectedLatencyMS     int64   `json:"injected_latency_ms,omitempty"`
	RequestContentType    string  `json:"request_content_type,omitempty"`
	RequestBytes          int64   `json:"request_bytes"`
	RequestBody           string  `json:"request_body,omitempty"`
	RequestBodyTruncated  bool    `json:"request_body_truncated,omitempty"`
	ResponseBytes         int64   `json:"response_bytes"`
	ResponseBody          string  `json:"response_body,omitempty"`
	ResponseBodyTruncated bool    `json:"response_body_truncated,omitempty"`
}

// maxJournalString caps the path, query, method and content type kept per
// entry, so that the journal's memory stays bounded whatever clients send.
const maxJournalString = 1024

// JournalFilter selects journal entries; zero fields match everything.
type JournalFilter struct {
	Method      string
	PathPrefix  string
	Status      int
	Operation   string
	WorkspaceID uint64
	Limit       int
}

func (f JournalFilter) match(e *JournalEntry) bool {
	return (f.Method == "" || strings.EqualFold(f.Method, e.Method)) &&
		(f.PathPrefix == "" || strings.HasPrefix(e.Path, f.PathPrefix)) &&
		(f.Status == 0 || f.Status == e.Status) &&
		(f.Operation == "" || f.Operation == e.Operation) &&
		(f.WorkspaceID == 0 || f.WorkspaceID == e.WorkspaceID)
}

// journal is a ring of the most recent requests. Its memory is bounded: at
// most size entries, each with at most bodyCap bytes of request and of
// response body, in buffers allocated once per slot.
type journal struct {
	mu       sync.Mutex
	slots    []journalSlot
	next     int // where the next entry goes
	recorded int64
	bodyCap  int
}

type journalSlot struct {
	used     bool
	entry    JournalEntry // bodies are kept in the buffers below
	req, res []byte
}

func newJournal(size, bodyCap int) *journal {
	if size <= 0 {
		return nil
	}
	return &journal{slots: make([]journalSlot, size), bodyCap: bodyCap}
}

func (j *journal) add(e JournalEntry, req, res []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := &j.slots[j.next]
	j.next = (j.next + 1) % len(j.slots)
	j.recorded++
	if s.req == nil && j.bodyCap > 0 {
		s.req, s.res = make([]byte, 0, j.bodyCap), make([]byte, 0, j.bodyCap)
	}
	s.used, s.entry = true, e
	s.req = append(s.req[:0], req[:min(len(req), j.bodyCap)]...)
	s.res = append(s.res[:0], res[:min(len(res), j.bodyCap)]...)
}

// list returns the matching entries, newest first.
func (j *journal) list(f JournalFilter) []JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := []JournalEntry{}
	for i := 1; i <= len(j.slots); i++ {
		s := &j.slots[(j.next-i+len(j.slots))%len(j.slots)]
		if !s.used || !f.match(&s.entry) {
			continue
		}
		e := s.entry
		e.RequestBody, e.ResponseBody = string(s.req), string(s.res)
		out = append(out, e)
		if f.Limit > 0 && len(out) >= f.Limit {
			break
		}
	}
	return out
}

func (j *journal) clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.slots {
		j.slots[i].used = false
	}
	j.next, j.recorded = 0, 0
}

// capture keeps the first bytes of a stream for the journal.
type capture struct {
	buf   *bytes.Buffer
	cap   int
	total int64
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newCapture(limit int) *capture {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return &capture{buf: b, cap: limit}
}

func (c *capture) keep(p []byte) {
	c.total += int64(len(p))
	if room := c.cap - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
}

func (c *capture) release() { bufPool.Put(c.buf) }

// captureBody reads a request body, keeping its first bytes.
type captureBody struct {
	io.ReadCloser
	c *capture
}

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.keep(p[:n])
	return n, err
}

// record adds a finished request to the journal and to the coverage.
func (s *Server) record(w *respWriter, r *http.Request, started time.Time) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if w.op != "" {
		s.cov.hit(w.op, status)
	}
	if s.journal == nil || strings.HasPrefix(r.URL.Path, ControlPath+"/") {
		w.releaseCaptures()
		return
	}
	capped := func(s string) string { return s[:min(len(s), maxJournalString)] }
	e := JournalEntry{
		ID: w.Header().Get("X-Request-Id"), Time: sim.FormatTime(started), SimTime: sim.FormatTime(s.eng.Clock().Now()),
		Method: capped(r.Method), Path: capped(r.URL.Path), Query: capped(r.URL.RawQuery), Operation: w.op, Status: status,
		ErrorCode: w.errCode, DurationMS: float64(s.opts.WallClock().Sub(started).Microseconds()) / 1000,
		InjectedLatencyMS: w.latency.Milliseconds(), RequestContentType: capped(r.Header.Get("Content-Type")),
	}
	if w.principal != nil {
		e.WorkspaceID = w.principal.WorkspaceID
	}
	var reqBody, resBody []byte
	if w.reqCapture != nil {
		reqBody, e.RequestBytes = w.reqCapture.buf.Bytes(), w.reqCapture.total
		e.RequestBodyTruncated = e.RequestBytes > int64(len(reqBody))
	}
	if w.resCapture != nil {
		resBody, e.ResponseBytes = w.resCapture.buf.Bytes(), w.resCapture.total
		e.ResponseBodyTruncated = e.ResponseBytes > int64(len(resBody))
	}
	s.journal.add(e, reqBody, resBody)
	w.releaseCaptures()
}

// Journal returns the recorded requests, newest first.
func (s *Server) Journal(f JournalFilter) []JournalEntry {
	if s.journal == nil {
		return []JournalEntry{}
	}
	return s.journal.list(f)
}

// ClearJournal forgets every recorded request.
func (s *Server) ClearJournal() {
	if s.journal != nil {
		s.journal.clear()
	}
}
