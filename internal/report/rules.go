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
// how to fix it in the client.
type Rule struct {
	ID, Severity, Title, Means, Fix string
}

// Rules are the findings the report can make, in the order it lists them.
// An id never changes meaning; a new rule takes a new id.
var Rules = []Rule{
	{"poll-without-wait", Warning, "Polling without wait_seconds",
		"A job was read 3 or more times before it was seen done, and neither its creation nor any read passed `wait_seconds`.",
		"Pass `wait_seconds` (up to 55) on the creation or the read: one request waits for the job instead of many."},
	{"late-notice", Warning, "Finished jobs noticed late",
		"The client first saw a job done more than 30 s (on the mock's clock) after it finished.",
		"Poll more often near the expected end, or long-poll with `wait_seconds`: the read then answers when the job ends."},
	{"rate-limited", Warning, "Rate limit reached",
		"Requests were answered 429 `rate_limited`: the workspace's window was spent.",
		"Spend fewer requests per job (long-poll with `wait_seconds`), and pace requests by `X-RateLimit-Remaining`."},
	{"retry-after-ignored", Error, "Retry-After ignored",
		"A request of the workspace went out before the `Retry-After` of a 429 had passed (on the mock's clock).",
		"After a 429, wait the seconds `Retry-After` says (a whole number) before the next request of the workspace."},
	{"no-backoff", Warning, "Retries without backoff",
		"After a 429 or a 5xx, the same operation was sent again within 100 ms, on both the mock's clock and the wall clock.",
		"Back off exponentially between retries (with jitter), and honour `Retry-After` when there is one."},
	{"duplicate-creation", Error, "Paid creation repeated after a lost answer",
		"A creation was sent again with the same body within 2 minutes after the first one's answer was lost to a transport fault: the first had been accepted and charged, so the work is paid twice.",
		"After a lost answer, look for the first creation (list the library, newest first) before creating again."},
	{"expired-url-retried", Warning, "Expired file address retried",
		"A file address answered 403 `file_url_expired` and the same address was requested again.",
		"Read the asset again (`GET /generations/{id}`) for a fresh address, then download it."},
	{"download-restarted", Warning, "Interrupted download restarted",
		"A file download was cut short, and the file was then fetched whole (200) instead of resumed with `Range` (206).",
		"Resume an interrupted download with `Range: bytes=<received>-`."},
	{"poll-after-terminal", Warning, "Reads after the job was done",
		"A job was read again after the client had seen it completed or failed, with no file trouble in between.",
		"Stop polling a job once a read answers `completed` or `failed`."},
	{"poll-unknown-id", Warning, "Reads of unknown jobs",
		"Reads of a generation, asset or Encore creation answered 404: the client polls ids that do not exist (or are another workspace's).",
		"Poll the ids the creation answered with, with the key of the workspace that made them."},
	{"over-concurrency", Info, "More jobs than the concurrency limit",
		"A creation was made while the workspace already had the modality's limit of jobs running (8 per studio modality, 3 Encore creations): it waited in the queue.",
		"Keep at most the limit of jobs in flight per modality; queue the rest in the client."},
	{"mcp-reinitialize", Warning, "MCP session per call",
		"The client sent 3 or more MCP `initialize` requests and no more tool calls than that: a new session for each call.",
		"Open one MCP session and make every call in it (or speak the sessionless revision 2026-07-28)."},
	outsideContract,
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
