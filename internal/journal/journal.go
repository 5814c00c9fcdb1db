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
		e.Seq > f.After && (f.Before == 0 || e.Seq < f.Before)
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
	// follow makes the observer of the journal's entries (Follow); obs is
	// the one that follows them since the journal was made or cleared.
	follow func() Observer
	obs    Observer
	parts  Parts // what the observer is handed: a field, so that no call allocates it
}

type journalSlot struct {
	used     bool
	entry    Entry // bodies and headers are kept in the buffers below
	req, res []byte
	// reqHdr and resHdr are the headers, as Headers lines.
	reqHdr, resHdr []byte
}

// Parts are what a journal keeps of an exchange besides its entry: the
// first bytes of its bodies, and its headers as Headers lines (see
// AppendHeaders), each cut at its cap.
type Parts struct {
	Request, Response               []byte
	RequestHeaders, ResponseHeaders []byte
}

// MaxHeaderBytes caps the headers kept of each side of an exchange.
const MaxHeaderBytes = 8 << 10

// Observer follows what a journal records, one entry at a time in the
// order of their numbers (Seq), as each is added: the client report's
// running aggregates (internal/report) are one. Observe is called with the
// journal's lock held: it must not call the journal back, and should be
// quick, for every request waits on it. The entry's bodies are in p, not
// in its fields; neither may be kept after Observe returns.
type Observer interface {
	Observe(e *Entry, p *Parts)
}

// New returns a journal of size entries, or nil when size is not positive.
func New(size, bodyCap int) *Journal {
	if size <= 0 {
		return nil
	}
	return &Journal{size: size, bodyCap: bodyCap}
}

// Follow makes an observer with make now, and again each time the journal
// is cleared, and tells it every entry recorded from then on.
func (j *Journal) Follow(make func() Observer) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.follow, j.obs = make, make()
}

// Observer is the observer that follows the journal (Follow), nil when
// none does.
func (j *Journal) Observer() Observer {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.obs
}

// Add records an entry with the first bytes of its bodies.
func (j *Journal) Add(e Entry, req, res []byte) {
	j.Keep(e, Parts{Request: req, Response: res})
}

// Keep records an entry with what is kept of its bodies and headers, and
// tells the observer.
func (j *Journal) Keep(e Entry, p Parts) {
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
	s.req = append(s.req[:0], p.Request[:min(len(p.Request), j.bodyCap)]...)
	s.res = append(s.res[:0], p.Response[:min(len(p.Response), j.bodyCap)]...)
	s.reqHdr = append(s.reqHdr[:0], p.RequestHeaders[:min(len(p.RequestHeaders), MaxHeaderBytes)]...)
	s.resHdr = append(s.resHdr[:0], p.ResponseHeaders[:min(len(p.ResponseHeaders), MaxHeaderBytes)]...)
	if j.obs != nil {
		j.parts = Parts{Request: s.req, Response: s.res, RequestHeaders: s.reqHdr, ResponseHeaders: s.resHdr}
		j.obs.Observe(&s.entry, &j.parts)
		j.parts = Parts{}
	}
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

// Count is how many entries match f.
func (j *Journal) Count(f Filter) int {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for i := range j.slots {
		if s := &j.slots[i]; s.used && match(f, &s.entry) {
			n++
		}
	}
	return n
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
	if j.follow != nil {
		j.obs = j.follow()
	}
}

// Held returns the request id of each numbered entry the journal still
// holds, "" for one it no longer does (dropped, or cleared).
func (j *Journal) Held(seqs []int64) []string {
	out := make([]string, len(seqs))
	if j == nil {
		return out
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, seq := range seqs {
		if s := j.slotOf(seq); s != nil {
			out[i] = s.entry.ID
		}
	}
	return out
}

// slotOf is the slot of the entry numbered seq, nil when the journal no
// longer holds it. Entries are numbered one after the other into the
// ring, so the newest is at next-1 and seq k before it k slots back.
// Requires j.mu.
func (j *Journal) slotOf(seq int64) *journalSlot {
	back := j.seq - seq
	if seq <= 0 || back < 0 || back >= int64(len(j.slots)) {
		return nil
	}
	s := &j.slots[(j.next-1-int(back)+2*j.size)%j.size]
	if !s.used || s.entry.Seq != seq {
		return nil
	}
	return s
}

// Kept is an entry as the journal keeps it whole, with its headers: what
// an export of the journal (HAR) writes of each request.
type Kept struct {
	Entry
	// RequestHeaders and ResponseHeaders are Headers lines.
	RequestHeaders, ResponseHeaders Headers
}

// Since returns at most n entries numbered after after that match f,
// oldest first, with their bodies and headers: an export reads the
// journal a chunk at a time, without holding it while it writes, and
// goes on after the last entry of a chunk. Entries the ring dropped in
// between are not seen.
func (j *Journal) Since(f Filter, after int64, n int) []Kept {
	if j == nil || n <= 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Kept
	held := int64(len(j.slots))
	for seq := max(after+1, j.seq-held+1); seq <= j.seq && len(out) < n; seq++ {
		s := j.slotOf(seq)
		if s == nil || !match(f, &s.entry) {
			continue
		}
		x := Kept{Entry: s.entry, RequestHeaders: Headers(s.reqHdr), ResponseHeaders: Headers(s.resHdr)}
		x.RequestBody, x.ResponseBody = string(s.req), string(s.res)
		out = append(out, x)
	}
	return out
}

// Start is the number after which the newest limit entries matching f
// begin (0 for every one): an export of the last limit entries, oldest
// first, reads Since(f, Start(f, limit), ...).
func (j *Journal) Start(f Filter, limit int) int64 {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	found := 0
	for i := 1; i <= len(j.slots); i++ {
		s := &j.slots[(j.next-i+j.size)%j.size]
		if !s.used || !match(f, &s.entry) {
			continue
		}
		if found++; limit > 0 && found == limit {
			return s.entry.Seq - 1
		}
	}
	return f.After
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
	follow        func(ws uint64) Observer
}

// NewRings returns rings of size entries, each with bodyCap bytes of body.
func NewRings(size, bodyCap int) *Rings { return &Rings{size: size, bodyCap: bodyCap} }

// Follow makes each ring opened from now on followed by an observer of
// its own (Journal.Follow), made by make with the ring's workspace.
func (r *Rings) Follow(make func(ws uint64) Observer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.follow = make
}

// Open gives workspace ws a journal of its own, empty.
func (r *Rings) Open(ws uint64) {
	j := New(r.size, r.bodyCap)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.follow != nil {
		make := r.follow
		j.Follow(func() Observer { return make(ws) })
	}
	if r.m == nil {
		r.m = map[uint64]*Journal{}
	}
	r.m[ws] = j
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
