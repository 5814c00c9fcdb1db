package report

import (
	"fmt"
	"slices"
)

// Severities, from the least to the most serious.
const (
	Info    = "info"
	Warning = "warning"
	Error   = "error"
)

// Rule is one kind of finding: its stable id, severity, what it means and
// how to fix it in the client. Fits are the fixes that fit what a client
// did better than Fix, in the order they are tried: the report gives the
// first whose case the client's requests show, else Fix.
type Rule struct {
	ID, Severity, Title, Means, Fix string
	Fits                            []Fit
}

// Fit is a fix for one case of a finding: When says what the client did.
type Fit struct {
	When, Fix string
}

// The rules' indexes in Rules: a Tally keeps a finding per rule, by index.
const (
	pollWithoutWait = iota
	lateNotice
	rateLimited
	retryAfterIgnored
	noBackoff
	duplicateCreation
	expiredURLRetried
	downloadRestarted
	pollAfterTerminal
	pollUnknownID
	overConcurrency
	mcpReinitialize
	outsideContract
	nRules
)

// The cases of the rules' Fits, by index in their rule's Fits.
const (
	fitThrottled = 0 // poll-without-wait, late-notice: the client was refused with 429 meanwhile
	fitWaited    = 1 // late-notice: it long-polled, and paused between waits
	fitGiven     = 0 // no-backoff: the answer gave a Retry-After
	fitLibrary   = 0 // poll-after-terminal: a library page had shown the job done
)

// Rules are the findings the report can make, in the order it lists them.
// An id never changes meaning; a new rule takes a new id.
var Rules = []Rule{
	pollWithoutWait: {ID: "poll-without-wait", Severity: Warning, Title: "Polling without wait_seconds",
		Means: "A job was read 3 or more times before it was seen done, and neither its creation nor any read passed `wait_seconds`.",
		Fix:   "Pass `wait_seconds` (up to 55) on the creation or the read: one request waits for the job instead of many.",
		Fits: []Fit{fitThrottled: {When: "the workspace was refused with 429 while the client polled",
			Fix: "Pass `wait_seconds` (up to 55) on the creation or the read: one request waits for the job instead of many, " +
				"and the polls no longer spend the rate window that refused the client; after a 429, wait the `Retry-After` it gives."}}},
	lateNotice: {ID: "late-notice", Severity: Warning, Title: "Finished jobs noticed late",
		Means: "The client first saw a job done more than 30 s (on the mock's clock) after it finished.",
		Fix:   "Long-poll with `wait_seconds`: the read then answers when the job ends (or poll more often near its expected end).",
		Fits: []Fit{
			fitThrottled: {When: "the workspace was refused with 429 while the client waited for the job",
				Fix: "Do not poll more often: the rate window already refused the client. Long-poll with `wait_seconds` " +
					"(one request waits up to 55 s and answers when the job ends), and after a 429 wait the `Retry-After` it gives, then read at once."},
			fitWaited: {When: "the client passed `wait_seconds`",
				Fix: "Read again as soon as a long poll answers with the job still running: a wait ends after `wait_seconds` at most, " +
					"and a client that pauses between waits sees the end late."}}},
	rateLimited: {ID: "rate-limited", Severity: Warning, Title: "Rate limit reached",
		Means: "Requests were answered 429 `rate_limited`: the workspace's window was spent.",
		Fix:   "Spend fewer requests per job (long-poll with `wait_seconds`), and pace requests by `X-RateLimit-Remaining`."},
	retryAfterIgnored: {ID: "retry-after-ignored", Severity: Error, Title: "Retry-After ignored",
		Means: "A request of the workspace went out before the `Retry-After` of a 429 had passed (on the mock's clock).",
		Fix:   "After a 429, wait the seconds `Retry-After` says (a whole number) before the next request of the workspace."},
	noBackoff: {ID: "no-backoff", Severity: Warning, Title: "Retries without backoff",
		Means: "After a 429 or a 5xx, the same operation was sent again sooner than the `Retry-After` the answer gave " +
			"(within 100 ms when it gave none), on both the mock's clock and the wall clock.",
		Fix: "Back off exponentially between retries (with jitter), and honour `Retry-After` when there is one.",
		Fits: []Fit{fitGiven: {When: "the answer gave a `Retry-After`",
			Fix: "Wait the seconds the answer's `Retry-After` says before sending the operation again; " +
				"back off exponentially, with jitter, when an answer gives none."}}},
	duplicateCreation: {ID: "duplicate-creation", Severity: Error, Title: "Paid creation repeated after a lost answer",
		Means: "A creation was sent again with the same body within 2 minutes after the first one's answer was lost to a transport fault: the first had been accepted and charged, so the work is paid twice.",
		Fix:   "After a lost answer, look for the first creation (list the library, newest first) before creating again."},
	expiredURLRetried: {ID: "expired-url-retried", Severity: Warning, Title: "Expired file address retried",
		Means: "A file address answered 403 `file_url_expired` and the same address was requested again.",
		Fix:   "Read the asset again (`GET /generations/{id}`) for a fresh address, then download it."},
	downloadRestarted: {ID: "download-restarted", Severity: Warning, Title: "Interrupted download restarted",
		Means: "A file download was cut short, and the file was then fetched whole (200) instead of resumed with `Range` (206).",
		Fix:   "Resume an interrupted download with `Range: bytes=<received>-`."},
	pollAfterTerminal: {ID: "poll-after-terminal", Severity: Warning, Title: "Reads after the job was done",
		Means: "A job was read again after the client had seen it completed or failed (in a read of the job, in its creation's answer, " +
			"or in a page of the library that listed it after its creation's answer was lost), with no file trouble in between. " +
			"The read that showed it done is cited with the reads after it.",
		Fix: "Stop polling a job once a read answers `completed` or `failed`.",
		Fits: []Fit{fitLibrary: {When: "a page of the library had shown the job done, after its creation's answer was lost",
			Fix: "The library page that listed the job (the first request cited) already showed it done, with its file addresses: " +
				"use what it showed instead of reading the job again."}}},
	pollUnknownID: {ID: "poll-unknown-id", Severity: Warning, Title: "Reads of unknown jobs",
		Means: "Reads of a generation, asset or Encore creation answered 404: the client polls ids that do not exist (or are another workspace's).",
		Fix:   "Poll the ids the creation answered with, with the key of the workspace that made them."},
	overConcurrency: {ID: "over-concurrency", Severity: Info, Title: "More jobs than the concurrency limit",
		Means: "A creation was made while the workspace already had the modality's limit of jobs running (8 per studio modality, 3 Encore creations): it waited in the queue.",
		Fix:   "Keep at most the limit of jobs in flight per modality; queue the rest in the client."},
	mcpReinitialize: {ID: "mcp-reinitialize", Severity: Warning, Title: "MCP session per call",
		Means: "The client sent 3 or more MCP `initialize` requests and no more tool calls than that: a new session for each call.",
		Fix:   "Open one MCP session and make every call in it (or speak the sessionless revision 2026-07-28)."},
	outsideContract: {ID: "outside-contract", Severity: Info, Title: "Answers outside the contract (rehearsed drift)",
		Means: "A status fault with `drift: true` answered a status, error code or body openapi.json does not allow (the journal's `outside_contract` says which): the client met the service's possible drift on purpose.",
		Fix:   "Nothing, if the client was meant to rehearse drift: check that it survived each of these answers (the request ids); a client of the contract alone need not handle them."},
}

// RuleOf returns the rule of an id.
func RuleOf(id string) (Rule, bool) {
	i := slices.IndexFunc(Rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return Rules[i], true
}

// ValidFailOn reports what of a fail_on list is neither a finding id nor
// a severity.
func ValidFailOn(list []string) error {
	for _, v := range list {
		if _, ok := RuleOf(v); !ok && v != Info && v != Warning && v != Error {
			return fmt.Errorf("fail_on: %q is neither a finding id nor a severity (info, warning, error)", v)
		}
	}
	return nil
}
