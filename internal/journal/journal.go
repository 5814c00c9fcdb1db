// Package journal keeps what the fronts served: a bounded ring of recent
// requests with the first bytes of their bodies, and the coverage counts of
// operations and statuses.
package journal

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/fanout"
)

// Entry is one recorded request: the control API's own type, which the
// journal keeps as it shows it.
type Entry = controlapi.JournalEntry

// MaxString caps the path, query, method and content type kept per
// entry, so that the journal's memory stays bounded whatever clients send.
const MaxString = 1024

// Filter selects journal entries; zero fields match everything.
type Filter = controlapi.JournalFilter

func match(f Filter, e *Entry) bool {
	return (f.Front == "" || f.Front == e.Front) &&
		(f.ID == "" || f.ID == e.ID) &&
		(f.Method == "" || strings.EqualFold(f.Method, e.Method)) &&
		(f.PathPrefix == "" || strings.HasPrefix(e.Path, f.PathPrefix)) &&
		(f.Status == 0 || f.Status == e.Status) &&
		(f.Operation == "" || f.Operation == e.Operation) &&
		(f.WorkspaceID == 0 || f.WorkspaceID == e.WorkspaceID) &&
		(f.SandboxID == "" || f.SandboxID == e.SandboxID) &&
		e.Seq > f.After
}

// Journal is a ring of the most recent requests. Its memory is bounded: at
// most size entries, each with at most bodyCap bytes of request and of
// response body, in buffers each slot keeps and grows to the largest body
// it held; slots are made as entries come, so an idle journal costs
// nothing. A nil *Journal records nothing.
type Journal struct {
	mu       sync.Mutex
	slots    []journalSlot // grown to size as entries come, then reused
	size     int
	next     int // where the next entry goes once the ring is full
	recorded int64
	bodyCap  int
	feed     fanout.Hub[Recorded]
	// seq numbers the entries, from 1, and is never reset: a waiter says
	// which entries it has seen by the last number (Wait).
	seq int64
	// arrived is closed at the next entry while anyone waits (one channel
	// for every waiter: a wait costs no buffer), then made again.
	arrived chan struct{}
	waiting int
}

type journalSlot struct {
	used     bool
	entry    Entry // bodies are kept in the buffers below
	req, res []byte
}

// New returns a journal of size entries, or nil when size is not positive.
func New(size, bodyCap int) *Journal {
	if size <= 0 {
		return nil
	}
	return &Journal{size: size, bodyCap: bodyCap}
}

// Add records an entry with the first bytes of its bodies.
func (j *Journal) Add(e Entry, req, res []byte) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.slots) < j.size {
		j.slots = append(j.slots, journalSlot{})
	}
	s := &j.slots[j.next]
	j.next = (j.next + 1) % j.size
	j.recorded++
	j.seq++
	s.used, s.entry = true, e
	s.entry.Seq = j.seq
	if j.arrived != nil {
		close(j.arrived)
		j.arrived = nil
	}
	s.req = append(s.req[:0], req[:min(len(req), j.bodyCap)]...)
	s.res = append(s.res[:0], res[:min(len(res), j.bodyCap)]...)
	j.feed.Publish(Recorded{Entry: e})
}

// Recorded is what a subscriber of the journal receives: an entry as it
// is recorded (without its bodies), or, after entries were dropped, how
// many.
type Recorded struct {
	Entry   Entry
	Dropped uint64
}

// Subscribe returns a channel of the entries recorded from now on, and a
// function that ends the subscription. The channel holds size entries; a
// subscriber that falls further behind loses entries and then receives a
// Recorded with Dropped set. Recording never waits for a subscriber. A nil
// journal records nothing: its channel never delivers.
func (j *Journal) Subscribe(size int) (<-chan Recorded, func()) {
	if j == nil {
		return nil, func() {}
	}
	return j.feed.Subscribe(size, func(n uint64) Recorded { return Recorded{Dropped: n} })
}

// List returns the matching entries, newest first.
func (j *Journal) List(f Filter) []Entry {
	if j == nil {
		return []Entry{}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	out := []Entry{}
	for i := 1; i <= len(j.slots); i++ {
		s := &j.slots[(j.next-i+j.size)%j.size]
		if !s.used || !match(f, &s.entry) {
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

// Page appends to out the matching entries numbered before before,
// newest first, at most n of them (n > 0), and returns it: a long read
// goes through the journal a page at a time, holding its lock for one page
// only. An entry the ring dropped in the meantime is not there any more.
func (j *Journal) Page(f Filter, before int64, n int, out []Entry) []Entry {
	if j == nil {
		return out
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	// The entry numbered before-1 is k slots behind the next one.
	k := max(j.seq-before+2, 1)
	for added := 0; k <= int64(len(j.slots)) && added < n; k++ {
		s := &j.slots[(j.next-int(k)+j.size)%j.size]
		if !s.used || s.entry.Seq >= before || !match(f, &s.entry) {
			continue
		}
		e := s.entry
		e.RequestBody, e.ResponseBody = string(s.req), string(s.res)
		out = append(out, e)
		added++
	}
	return out
}

// Seq is the number of the last entry recorded (0 before any): a wait
// after it matches only what comes next.
func (j *Journal) Seq() int64 {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq
}

// Wait returns the first entry numbered after f.After that matches f, as
// soon as it is recorded, with its bodies; false when ctx ends first.
// Entries the ring has already dropped are not seen. A nil journal never
// matches.
func (j *Journal) Wait(ctx context.Context, f Filter) (Entry, bool) {
	if j == nil {
		<-ctx.Done()
		return Entry{}, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	after := f.After
	for {
		if e, ok := j.firstAfter(f, after); ok {
			return e, true
		}
		after = max(after, j.seq)
		if j.arrived == nil {
			j.arrived = make(chan struct{})
		}
		arrived := j.arrived
		j.waiting++
		j.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
		}
		j.mu.Lock()
		j.waiting--
		if ctx.Err() != nil {
			return Entry{}, false
		}
	}
}

// Waiting counts the waits in progress.
func (j *Journal) Waiting() int {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.waiting
}

// firstAfter is the oldest entry numbered after after that matches f.
// Requires j.mu.
func (j *Journal) firstAfter(f Filter, after int64) (Entry, bool) {
	n := int(min(max(j.seq-after, 0), int64(len(j.slots))))
	for k := n; k >= 1; k-- {
		s := &j.slots[(j.next-k+j.size)%j.size]
		if !s.used || s.entry.Seq <= after || !match(f, &s.entry) {
			continue
		}
		e := s.entry
		e.RequestBody, e.ResponseBody = string(s.req), string(s.res)
		return e, true
	}
	return Entry{}, false
}

// Clear forgets every entry.
func (j *Journal) Clear() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.slots, j.next, j.recorded = nil, 0, 0 // seq goes on: a wait's after still means what it meant
}

// Capture keeps the first bytes of a stream for the journal.
type Capture struct {
	buf   *bytes.Buffer
	cap   int
	total int64
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// NewCapture keeps up to limit bytes, in a pooled buffer.
func NewCapture(limit int) *Capture {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return &Capture{buf: b, cap: limit}
}

// Keep takes the bytes that still fit.
func (c *Capture) Keep(p []byte) {
	c.total += int64(len(p))
	if room := c.cap - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
}

// Bytes are the kept bytes; Total counts every byte seen.
func (c *Capture) Bytes() []byte { return c.buf.Bytes() }

// Replace puts p in place of what went by: the answer was rewritten
// before it was sent.
func (c *Capture) Replace(p []byte) {
	c.buf.Reset()
	c.total = 0
	c.Keep(p)
}

// Total is how many bytes went by.
func (c *Capture) Total() int64 { return c.total }

// Release returns the buffer to the pool.
func (c *Capture) Release() { bufPool.Put(c.buf) }

// CaptureBody reads a request body, keeping its first bytes.
type CaptureBody struct {
	io.ReadCloser
	C *Capture
}

func (b *CaptureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.C.Keep(p[:n])
	return n, err
}

// Stats are the journal's size, body cap and count of entries recorded.
func (j *Journal) Stats() (size, bodyCap int, recorded int64) {
	if j == nil {
		return 0, 0, 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size, j.bodyCap, j.recorded
}

// BodyCap is how many bytes of each body an entry keeps.
func (j *Journal) BodyCap() int { return j.bodyCap }

// Rings are the journals of the workspaces that keep their own (sandboxes),
// beside the server's: a sandbox's requests stay in its ring however busy
// the others are.
type Rings struct {
	mu            sync.RWMutex
	m             map[uint64]*Journal
	size, bodyCap int
}

// NewRings returns rings of size entries, each with bodyCap bytes of body.
func NewRings(size, bodyCap int) *Rings { return &Rings{size: size, bodyCap: bodyCap} }

// Open gives workspace ws a journal of its own, empty.
func (r *Rings) Open(ws uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[uint64]*Journal{}
	}
	r.m[ws] = New(r.size, r.bodyCap)
}

// Close forgets the journal of workspace ws.
func (r *Rings) Close(ws uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, ws)
}

// CloseAll forgets every ring.
func (r *Rings) CloseAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = nil
}

// Of is the journal of workspace ws, and whether it has one.
func (r *Rings) Of(ws uint64) (*Journal, bool) {
	if ws == 0 {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	j, ok := r.m[ws]
	return j, ok
}
