// Package report grades a client of the service from what it sent: how it
// polled its jobs, how it spent its rate window, whether it repeated paid
// creations, how it fetched files, and what it wasted. Each finding has a
// stable id (Rules), a severity, a count and the requests that prove it,
// by their journal numbers (seq).
//
// The report is kept as each exchange is recorded (Tally, which follows a
// journal), in memory bounded per workspace, job and minute: it never
// loses a finding or a count to the journal's size, which only limits the
// examples a finding can still cite. Whether a read saw a job done is
// decided on the simulated clock, so the same run gives the same report,
// on every clock mode.
package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/journal"
)

// The report's types are the control API's (package controlapi).
type (
	Report  = controlapi.ClientReport
	Finding = controlapi.ClientFinding
	Job     = controlapi.ClientJob
	Summary = controlapi.ClientSummary
)

// maxExamples caps the requests a finding cites.
const maxExamples = keepFirst + keepLast

// Of grades the clients of journal j's scope (its Tally): every workspace
// when ws is 0, else one. scope names it in the report; now is the mock's
// clock; failOn lists finding ids and severities that fail the report. A
// journal no tally follows (journals off) gives an empty report.
func Of(j *journal.Journal, ws uint64, scope string, now time.Time, failOn []string) (Report, error) {
	r := Report{Scope: scope, GeneratedAt: now.UTC(), Findings: []Finding{}, Jobs: []Job{}, FailOn: failOn,
		Summary: Summary{Minutes: []controlapi.ClientMinute{}}}
	if r.FailOn == nil {
		r.FailOn = []string{}
	}
	t := TallyOf(j)
	if t == nil {
		return r, nil
	}
	m := t.merged(ws)

	// What the journal still holds: the examples it can cite, what it
	// dropped.
	var all []int64
	for i := range m.found {
		all = append(all, m.found[i].seqs...)
	}
	held := map[int64]string{}
	for i, id := range j.Held(all) {
		if id != "" {
			held[all[i]] = id
		}
	}
	_, _, recorded := j.Stats()
	kept := int64(j.Count(journal.Filter{}))
	if ws != 0 {
		recorded, kept = int64(m.requests), int64(j.Count(journal.Filter{WorkspaceID: ws}))
	}
	r.Summary.Requests = m.requests
	r.Summary.Dropped = max(0, recorded-kept)
	r.Summary.RateLimited = m.rateLimited
	if m.requests > 0 {
		r.Summary.ReadShare = float64(m.reads) / float64(m.requests)
	}
	r.Summary.Jobs = m.jobsSeen
	for _, x := range m.minutes {
		r.Summary.Minutes = append(r.Summary.Minutes, x.ClientMinute)
	}

	for i, rule := range Rules {
		f := &m.found[i]
		if f.count == 0 {
			continue
		}
		out := Finding{ID: rule.ID, Severity: rule.Severity, Title: rule.Title, Count: f.count, Detail: detail(i, f, m),
			RequestIDs: []string{}, Seqs: []int64{}, Credits: f.credits, Fix: rule.Fix}
		for k, fit := range rule.Fits {
			if f.fits&(1<<k) != 0 {
				out.Fix = fit.Fix
				break
			}
		}
		for _, seq := range f.seqs {
			if id, ok := held[seq]; ok {
				out.RequestIDs, out.Seqs = append(out.RequestIDs, id), append(out.Seqs, seq)
			} else {
				out.ExamplesDropped++
			}
		}
		r.Findings = append(r.Findings, out)
	}
	for _, s := range m.jobs {
		status := ""
		if job, ok, err := t.job(ref(s.ws, s.kind, s.id)); err != nil {
			return r, err
		} else if ok {
			status = job.Status
		}
		r.Jobs = append(r.Jobs, s.view(s.ws, status))
	}
	for _, f := range r.Findings {
		r.Failed = r.Failed || matches(r.FailOn, f)
	}
	return r, nil
}

// merged is what a tally keeps of the workspaces a report covers, added
// up, copied out of the tally.
type merged struct {
	requests, reads, rateLimited int
	found                        [nRules]mergedFinding
	initializes, toolCalls       int
	jobs                         []jobCopy // the jobs followed: the last keepJobs of each workspace
	jobsSeen                     int       // every job followed
	minutes                      []minuteCopy
	reads3                       int // poll-without-wait: the reads of the jobs polled
	maxLag                       float64
	outside                      string // outside-contract: why the first answer was
	outsideSeq                   int64
}

type mergedFinding struct {
	count   int
	credits int64
	fits    uint8
	seqs    []int64
}

type jobCopy struct {
	jobState
	ws uint64
}

type minuteCopy struct {
	controlapi.ClientMinute
	first int64
}

// merged adds up the workspaces of the report (every one when ws is 0),
// and makes the findings that need every request: polling without
// wait_seconds, MCP sessions per call.
func (t *Tally) merged(ws uint64) merged {
	t.mu.Lock()
	var m merged
	for id, w := range t.ws {
		if ws != 0 && id != ws {
			continue
		}
		m.requests += w.requests
		m.reads += w.reads
		m.rateLimited += w.rateLimited
		m.initializes += w.initializes
		m.toolCalls += w.toolCalls
		if w.outside != "" && (m.outside == "" || w.outsideSeq < m.outsideSeq) {
			m.outside, m.outsideSeq = w.outside, w.outsideSeq
		}
		for i := range w.found {
			f, to := &w.found[i], &m.found[i]
			to.count += f.count
			to.credits += f.credits
			to.fits |= f.fits
			to.seqs = f.ex.seqs(to.seqs)
		}
		for _, s := range w.order {
			m.jobs = append(m.jobs, jobCopy{*s, id})
		}
		m.jobsSeen += w.seen
		g, polled := &w.gone, &m.found[pollWithoutWait]
		polled.count += g.polled
		polled.seqs = g.ex.seqs(polled.seqs)
		m.reads3 += g.reads
		if g.throttled {
			polled.fits |= 1 << fitThrottled
		}
		m.maxLag = max(m.maxLag, g.maxLag)
		for _, x := range w.minutes {
			m.minutes = append(m.minutes, minuteCopy{controlapi.ClientMinute{Start: time.Unix(x.start, 0).UTC(), WorkspaceID: id,
				Requests: x.requests, Reads: x.reads, RateLimited: x.rateLimited}, x.first})
		}
	}
	t.mu.Unlock()

	slices.SortFunc(m.jobs, func(a, b jobCopy) int { return cmp.Compare(a.first, b.first) })
	slices.SortFunc(m.minutes, func(a, b minuteCopy) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.first, b.first))
	})
	polled := &m.found[pollWithoutWait]
	for _, s := range m.jobs {
		if s.polled() {
			polled.count++
			polled.seqs = append(append(polled.seqs, s.firstReads[:]...), s.lastRead)
			m.reads3 += s.reads
			if s.throttled {
				polled.fits |= 1 << fitThrottled
			}
		}
		if s.hasLag {
			m.maxLag = max(m.maxLag, s.lag)
		}
	}
	if f := &m.found[mcpReinitialize]; m.initializes >= 3 && m.toolCalls <= m.initializes {
		f.count = m.initializes
	}
	for i := range m.found {
		m.found[i].seqs = cite(m.found[i].seqs)
	}
	return m
}

// cite is the requests a finding cites: each once, oldest first, the
// first and the last when there are more than it cites.
func cite(seqs []int64) []int64 {
	slices.Sort(seqs)
	seqs = slices.Compact(slices.DeleteFunc(seqs, func(s int64) bool { return s <= 0 }))
	if len(seqs) > maxExamples {
		seqs = append(seqs[:keepFirst], seqs[len(seqs)-keepLast:]...)
	}
	return seqs
}

// detail says what the report saw of a rule, in a sentence.
func detail(rule int, f *mergedFinding, m merged) string {
	n := f.count
	switch rule {
	case pollWithoutWait:
		return fmt.Sprintf("%s polled 3 or more times without wait_seconds, with %s before %s seen done.",
			counted(n, "job", "jobs"), counted(m.reads3, "read", "reads"), plural(n, "it was", "they were"))
	case lateNotice:
		return fmt.Sprintf("%s seen done more than 30 s after %s finished (%.0f s after, at most).",
			counted(n, "job", "jobs"), plural(n, "it", "they"), m.maxLag)
	case rateLimited:
		return counted(n, "request", "requests") + " answered 429 rate_limited."
	case retryAfterIgnored:
		return counted(n, "request", "requests") + " sent inside a Retry-After window."
	case noBackoff:
		return counted(n, "retry", "retries") + " of an operation sooner than the Retry-After of its 429 or 5xx (or within 100 ms when it gave none)."
	case duplicateCreation:
		d := counted(n, "creation", "creations") + " repeated after a lost answer"
		if f.credits > 0 {
			d += fmt.Sprintf(": %s %s twice", plural(n, "it cost", "they cost"), counted(int(f.credits), "credit", "credits"))
		}
		return d + "."
	case expiredURLRetried:
		return counted(n, "request", "requests") + " of a file address that had answered file_url_expired."
	case downloadRestarted:
		return counted(n, "interrupted download", "interrupted downloads") + " fetched again whole."
	case pollAfterTerminal:
		return counted(n, "read of a job", "reads of jobs") + " already seen done."
	case pollUnknownID:
		return counted(n, "read", "reads") + " answered 404."
	case overConcurrency:
		return counted(n, "creation", "creations") + " made at the concurrency limit of their modality."
	case mcpReinitialize:
		return fmt.Sprintf("%s for %s.", counted(m.initializes, "initialize request", "initialize requests"),
			counted(m.toolCalls, "tool call", "tool calls"))
	case outsideContract:
		return fmt.Sprintf("%s outside the contract; the first: %s.", counted(n, "answer", "answers"), m.outside)
	}
	return ""
}

// Cited gives the ids of the findings that cite each request of journal
// j's scope (every workspace when ws is 0, else one), by the request's
// seq: what a HAR export of the journal annotates each exchange with.
func Cited(j *journal.Journal, ws uint64) map[int64][]string {
	t := TallyOf(j)
	if t == nil {
		return nil
	}
	m := t.merged(ws)
	out := map[int64][]string{}
	for i, f := range m.found {
		if f.count == 0 {
			continue
		}
		for _, seq := range f.seqs {
			out[seq] = append(out[seq], Rules[i].ID)
		}
	}
	return out
}
