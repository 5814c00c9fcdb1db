package report

import (
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/sim"
)

// Tally is the running aggregates of one journal's scope (the server's, or
// a sandbox's): it follows each exchange as the journal records it
// (journal.Observer) and keeps, per workspace, everything the report
// concludes: each rule's count, credits and example requests (by journal
// seq), the facts of each job, the requests of each minute. Its memory is
// a few hundred bytes per workspace, job and minute, whatever the number
// of requests: the journal's size only limits which examples a finding
// can still cite. A journal cleared starts a new Tally; a sandbox's dies
// with its journal; Forget drops a workspace from the server's.
type Tally struct {
	mu     sync.Mutex
	job    JobOf
	ws     map[uint64]*wsTally
	last   *wsTally // the workspace of the last entry (lastWS): most come in runs
	lastWS uint64
}

// JobOf returns the job a client knows by ref (sim.Engine.JobOf).
type JobOf func(ref sim.JobRef) (sim.Job, bool, error)

// NewTally returns an empty tally that looks jobs up with job.
func NewTally(job JobOf) *Tally { return &Tally{job: job, ws: map[uint64]*wsTally{}} }

// TallyOf is the tally that follows a journal, nil when none does (the
// journal is off, or nothing made it follow one).
func TallyOf(j *journal.Journal) *Tally {
	t, _ := j.Observer().(*Tally)
	return t
}

// Forget drops what the tally keeps of a workspace: a sandbox deleted or
// reset (its jobs' ids start again).
func (t *Tally) Forget(ws uint64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.ws, ws)
	t.last = nil
}

// ForgetAll drops what the tally keeps of every workspace: the state was
// replaced (a snapshot restored), and the workspaces are not those it kept.
func (t *Tally) ForgetAll() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.ws)
	t.last = nil
}

// Bounds of what a workspace keeps besides its jobs and minutes.
const (
	keepFirst, keepLast = 10, 10 // examples of a finding: the first and the last
	keepAddresses       = 32     // file addresses expired, downloads cut short
	keepLost            = 16     // creations whose answer was lost, for their repeats
	keepReads           = 3      // a job's first reads, cited when it was polled
	// keepJobs is how many jobs a workspace follows one by one: past it,
	// the oldest followed goes, and what it showed is added up (gone), so
	// that a workspace's memory stays bounded however many jobs it makes.
	keepJobs = 1000
)

// wsTally is what a tally keeps of one workspace (0: requests that
// identified none).
type wsTally struct {
	requests, reads, rateLimited int
	found                        [nRules]finding
	// retryUntil is the end of the last 429's Retry-After, on the mock's
	// clock; failures the last 429 or 5xx of each operation.
	retryUntil time.Time
	failures   map[string]failure
	// expired are file addresses answered file_url_expired; cut the file
	// paths whose download was cut short; trouble counts file answers
	// that failed or were cut.
	expired []address
	cut     []string
	trouble int
	lost    []lostCreation
	// initializes and toolCalls count MCP messages.
	initializes, toolCalls int
	// outside is why the first answer forced outside the contract was
	// (a drift rule's), outsideSeq its request.
	outside    string
	outsideSeq int64
	jobs       map[jobKey]*jobState
	// order are the jobs followed, oldest first; seen counts every job
	// ever followed; gone adds up those no longer followed.
	order   []*jobState
	seen    int
	gone    goneJobs
	minutes map[int64]*minuteTally
	minute  *minuteTally // the last one counted
}

// finding is what a workspace keeps of one rule.
type finding struct {
	count   int
	credits int64
	fits    uint8 // the rule's Fits whose case was seen, as bits
	ex      *examples
}

func (f *finding) add(seqs ...int64) {
	f.count++
	f.cite(seqs...)
}

// cite keeps requests as examples of the finding.
func (f *finding) cite(seqs ...int64) {
	if f.ex == nil {
		f.ex = &examples{}
	}
	for _, s := range seqs {
		f.ex.add(s)
	}
}

// examples are the journal numbers of a finding's first and last example
// requests.
type examples struct {
	first  [keepFirst]int64
	last   [keepLast]int64
	nFirst int
	nLast  int // how many went into last, which keeps the latest keepLast
}

func (x *examples) add(seq int64) {
	if seq <= 0 || x.has(seq) {
		return
	}
	if x.nFirst < keepFirst {
		x.first[x.nFirst] = seq
		x.nFirst++
		return
	}
	x.last[x.nLast%keepLast] = seq
	x.nLast++
}

func (x *examples) has(seq int64) bool {
	return slices.Contains(x.first[:x.nFirst], seq) || slices.Contains(x.last[:min(x.nLast, keepLast)], seq)
}

// seqs appends the examples to out.
func (x *examples) seqs(out []int64) []int64 {
	if x == nil {
		return out
	}
	return append(append(out, x.first[:x.nFirst]...), x.last[:min(x.nLast, keepLast)]...)
}

// failure is a 429 or a 5xx, which a retry of its operation should wait
// for.
type failure struct {
	sim, wall time.Time
	wait      time.Duration // its Retry-After, 0 when it gave none
	seq       int64
}

type address struct{ path, query string }

// lostCreation is a creation whose answer a fault cut.
type lostCreation struct {
	op   string
	body uint64 // the hash of its body
	at   time.Time
	seq  int64
	job  *jobState // the job it made, nil when unknown
}

type jobKey struct {
	kind byte
	id   uint64
}

// jobState is how the client followed one job.
type jobState struct {
	kind       byte
	id         uint64
	first      int64 // the seq it was first seen in: the report's order
	finishedAt time.Time
	atLimit    bool
	waited     bool
	seenDone   bool
	doneSeq    int64 // the request that showed it done
	byLibrary  bool  // that request was a page of the library
	throttled  bool  // the workspace was refused with 429 while the client followed it
	limited    int   // the workspace's rate_limited count when it was first seen
	hasLag     bool
	lag        float64
	reads      int
	readsAfter int
	trouble    int // the workspace's file trouble at its last read
	firstReads [keepReads]int64
	lastRead   int64
	keys       []jobKey // the ids it is known by (a generation's outputs)
}

// goneJobs is what the jobs a workspace no longer follows showed: those
// polled without wait_seconds (their count, reads and examples) and the
// longest lag of those seen done.
type goneJobs struct {
	polled, reads int
	throttled     bool
	ex            examples
	maxLag        float64
}

// polled reports whether the job was polled without wait_seconds.
func (s *jobState) polled() bool { return !s.waited && s.reads >= keepReads }

// follow starts following a job, the workspace's oldest followed job
// going when it follows keepJobs.
func (w *wsTally) follow(k jobKey, s *jobState) {
	if len(w.order) >= keepJobs {
		old := w.order[0]
		w.order = slices.Delete(w.order, 0, 1)
		for _, key := range old.keys {
			delete(w.jobs, key)
		}
		g := &w.gone
		if old.polled() {
			g.polled++
			g.reads += old.reads
			g.throttled = g.throttled || old.throttled
			for _, seq := range append(old.firstReads[:], old.lastRead) {
				g.ex.add(seq)
			}
		}
		if old.hasLag {
			g.maxLag = max(g.maxLag, old.lag)
		}
	}
	if w.jobs == nil {
		w.jobs = map[jobKey]*jobState{}
	}
	w.jobs[k] = s
	s.keys = append(s.keys, k)
	w.order = append(w.order, s)
	w.seen++
}

type minuteTally struct {
	start                        int64 // unix seconds
	first                        int64 // the seq of its first request
	requests, reads, rateLimited int
}

// Observe follows one exchange (journal.Observer).
func (t *Tally) Observe(e *journal.Entry, p *journal.Parts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.last
	if w == nil || t.lastWS != e.WorkspaceID {
		if w = t.ws[e.WorkspaceID]; w == nil {
			w = &wsTally{}
			t.ws[e.WorkspaceID] = w
		}
		t.last, t.lastWS = w, e.WorkspaceID
	}
	t.observe(w, e, p)
}

func (t *Tally) observe(w *wsTally, e *journal.Entry, p *journal.Parts) {
	w.requests++
	op, ws := e.Operation, e.WorkspaceID
	_, isRead := reads[op]
	limited := e.Status == 429 && e.ErrorCode == "rate_limited"
	counted := ws != 0 && counts(e)
	if counted {
		m := w.minuteOf(e)
		m.requests++
		if isRead {
			m.reads++
		}
		if limited {
			m.rateLimited++
		}
	}

	// The rate window: a request inside a 429's Retry-After, a retry
	// sooner than its failure asked.
	if counted && e.SimTime.Before(w.retryUntil) {
		w.found[retryAfterIgnored].add(e.Seq)
	}
	if op != "" {
		if len(w.failures) > 0 {
			if f, ok := w.failures[op]; ok {
				wait := f.wait
				if wait <= 0 {
					wait = 100 * time.Millisecond
				}
				if e.SimTime.Sub(f.sim) < wait && e.Time.Sub(f.wall) < wait {
					w.found[noBackoff].add(f.seq, e.Seq)
					if f.wait > 0 {
						w.found[noBackoff].fits |= 1 << fitGiven
					}
				}
				delete(w.failures, op)
			}
		}
		if e.Status == 429 || e.Status >= 500 {
			if w.failures == nil {
				w.failures = map[string]failure{}
			}
			w.failures[op] = failure{sim: e.SimTime, wall: e.Time, wait: retryAfter(p.Response, p.ResponseHeaders), seq: e.Seq}
		}
	}
	if limited {
		w.rateLimited++
		w.found[rateLimited].add(e.Seq)
		w.retryUntil = e.SimTime.Add(max(retryAfter(p.Response, p.ResponseHeaders), time.Second))
	}

	if e.OutsideContract != "" {
		w.found[outsideContract].add(e.Seq)
		if w.outside == "" {
			w.outside, w.outsideSeq = e.OutsideContract, e.Seq
		}
	}

	if e.Front == "mcp" && e.MCPMethod != "" {
		for m := range strings.SplitSeq(e.MCPMethod, ",") {
			switch m {
			case "initialize":
				w.initializes++
				w.found[mcpReinitialize].cite(e.Seq) // a finding when the calls are fewer: counted when reported
			case "tools/call":
				w.toolCalls++
			}
		}
	}

	switch {
	case strings.HasPrefix(e.Path, "/files/"):
		w.file(e)
	case op == "listAssets":
		if len(w.lost) > 0 && e.Status == 200 {
			t.library(w, e, p.Response)
		}
	case isRead:
		t.read(w, e, p)
	default:
		if kind, ok := creations[op]; ok {
			t.creation(w, kind, e, p)
		}
	}
}

// minuteOf is the rate window of a request that counts against it.
func (w *wsTally) minuteOf(e *journal.Entry) *minuteTally {
	start := e.SimTime.Truncate(time.Minute).Unix()
	if m := w.minute; m != nil && m.start == start {
		return m
	}
	if w.minutes == nil {
		w.minutes = map[int64]*minuteTally{}
	}
	m := w.minutes[start]
	if m == nil {
		m = &minuteTally{start: start, first: e.Seq}
		w.minutes[start] = m
	}
	w.minute = m
	return m
}

// file follows a request of a file.
func (w *wsTally) file(e *journal.Entry) {
	switch i := slices.Index(w.cut, e.Path); {
	case slices.Contains(w.expired, address{e.Path, e.Query}):
		w.found[expiredURLRetried].add(e.Seq)
		if i >= 0 {
			w.cut = slices.Delete(w.cut, i, i+1)
		}
	case i >= 0:
		if e.Status == 200 {
			w.found[downloadRestarted].add(e.Seq)
		}
		w.cut = slices.Delete(w.cut, i, i+1)
	}
	if e.ErrorCode == "file_url_expired" && !slices.Contains(w.expired, address{e.Path, e.Query}) {
		w.expired = keep(w.expired, address{e.Path, e.Query}, keepAddresses)
	}
	if e.AnswerCut {
		w.cut = keep(w.cut, e.Path, keepAddresses)
	}
	if e.Status >= 400 || e.AnswerCut {
		w.trouble++
	}
}

// keep appends v to a list of at most n, dropping the oldest.
func keep[T any](list []T, v T, n int) []T {
	if len(list) >= n {
		list = slices.Delete(list, 0, 1)
	}
	return append(list, v)
}

// creation follows a creation: a repeat after a lost answer, the job it
// made.
func (t *Tally) creation(w *wsTally, kind byte, e *journal.Entry, p *journal.Parts) {
	h := fnv.New64a()
	h.Write(p.Request)
	body := h.Sum64()
	for i, prev := range w.lost {
		if prev.op == e.Operation && prev.body == body && e.SimTime.Sub(prev.at) <= 2*time.Minute && !e.RequestBodyTruncated {
			f := &w.found[duplicateCreation]
			f.add(prev.seq, e.Seq)
			f.credits += charged(p.Response)
			w.lost = slices.Delete(w.lost, i, i+1)
			break
		}
	}
	if e.Status != 201 {
		return
	}
	var s *jobState
	if id := created(e, p.Response); id != 0 {
		s = t.jobOf(w, e, kind, id)
	}
	if e.AnswerCut {
		w.lost = keep(w.lost, lostCreation{op: e.Operation, body: body, at: e.SimTime, seq: e.Seq, job: s}, keepLost)
	}
	if s == nil {
		return
	}
	c := callOf(e, p.Request)
	s.waited = s.waited || c.wait
	if s.atLimit {
		w.found[overConcurrency].add(e.Seq)
	}
	// It waited, and answered done: the client saw it done, unless the
	// answer was lost.
	// A creation that did not wait answers a job not done yet: its end is
	// not looked up.
	if !e.AnswerCut && (c.wait || !s.finishedAt.IsZero()) && t.done(w, s, e) {
		s.sawDone(e.Seq, e.SimTime, false)
	}
}

// library follows a page of the library after a creation's answer was
// lost: a page that lists its job done shows the client the job done.
func (t *Tally) library(w *wsTally, e *journal.Entry, res []byte) {
	page := structured(e, res)
	for _, l := range w.lost {
		s := l.job
		if s == nil || s.seenDone || !lists(page, s.id) || !t.done(w, s, e) {
			continue
		}
		s.sawDone(e.Seq, e.SimTime, true)
	}
}

// read follows a read of a job.
func (t *Tally) read(w *wsTally, e *journal.Entry, p *journal.Parts) {
	w.reads++
	if e.Status == 404 {
		w.found[pollUnknownID].add(e.Seq)
		return
	}
	if e.Status != 200 {
		return
	}
	c := callOf(e, p.Request)
	if c.id == 0 {
		return
	}
	s := t.jobOf(w, e, reads[e.Operation], c.id)
	if s == nil {
		return
	}
	s.waited = s.waited || c.wait
	if w.rateLimited > s.limited && !s.seenDone {
		s.throttled = true
	}
	switch {
	case s.seenDone:
		if w.trouble == s.trouble {
			s.readsAfter++
			f := &w.found[pollAfterTerminal]
			f.add(s.doneSeq, e.Seq)
			if s.byLibrary {
				f.fits |= 1 << fitLibrary
			}
		}
	case t.done(w, s, e):
		s.reads++
		if s.sawDone(e.Seq, e.SimTime, false) {
			f := &w.found[lateNotice]
			f.add(e.Seq)
			switch {
			case s.throttled:
				f.fits |= 1 << fitThrottled
			case s.waited:
				f.fits |= 1 << fitWaited
			}
		}
	default:
		if s.reads < keepReads {
			s.firstReads[s.reads] = e.Seq
		}
		s.reads++
		s.lastRead = e.Seq
	}
	s.trouble = w.trouble
}

// sawDone records the answer that first showed the job done, and reports
// whether it came late.
func (s *jobState) sawDone(seq int64, at time.Time, library bool) (late bool) {
	s.seenDone, s.doneSeq, s.byLibrary = true, seq, library
	s.lag, s.hasLag = at.Sub(s.finishedAt).Seconds(), true
	return s.lag > 30
}

// done reports whether a job had finished when an exchange was answered,
// on the mock's clock. A job not seen finished yet is looked up again: a
// job's end does not change once it came.
func (t *Tally) done(w *wsTally, s *jobState, e *journal.Entry) bool {
	if s.finishedAt.IsZero() {
		j, ok, err := t.job(ref(e.WorkspaceID, s.kind, s.id))
		if err != nil || !ok || j.FinishedAt == 0 {
			return false
		}
		s.finishedAt = j.FinishedAt.Time()
	}
	return !e.SimTime.Before(s.finishedAt)
}

func ref(ws uint64, kind byte, id uint64) sim.JobRef {
	if kind == encore {
		return sim.JobRef{WorkspaceID: ws, EncoreID: id}
	}
	return sim.JobRef{WorkspaceID: ws, AssetID: id}
}

// jobOf is the state of a job the client knows by id, looked up the first
// time; nil for a job the engine does not know.
func (t *Tally) jobOf(w *wsTally, e *journal.Entry, kind byte, id uint64) *jobState {
	k := jobKey{kind, id}
	if s, ok := w.jobs[k]; ok {
		return s
	}
	j, ok, err := t.job(ref(e.WorkspaceID, kind, id))
	if err != nil || !ok {
		return nil
	}
	if kind == generation && len(j.AssetIDs) > 0 && j.AssetIDs[0] != id {
		// Another output of the same generation: the job is its first
		// asset's.
		s := t.jobOf(w, e, kind, j.AssetIDs[0])
		if s != nil {
			w.jobs[k] = s
			s.keys = append(s.keys, k)
		}
		return s
	}
	s := &jobState{kind: kind, id: id, first: e.Seq, atLimit: j.AtLimit, limited: w.rateLimited}
	if j.FinishedAt != 0 {
		s.finishedAt = j.FinishedAt.Time()
	}
	w.follow(k, s)
	return s
}

// Fields of a job state the report shows.
func (s *jobState) view(ws uint64, status string) controlapi.ClientJob {
	j := controlapi.ClientJob{Kind: kindNames[s.kind], ID: s.id, WorkspaceID: ws, Status: status, Reads: s.reads,
		ReadsAfter: s.readsAfter, Waited: s.waited}
	if s.hasLag {
		lag := s.lag
		j.LagSeconds = &lag
	}
	return j
}
