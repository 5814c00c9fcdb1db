package fault

import (
	"fmt"
	"slices"
	"strings"
)

// Fault kinds.
const (
	Reset               = "reset"                // the connection is reset (RST) after AfterBytes of the response
	EmptyReply          = "empty_reply"          // the connection closes with no answer
	Truncate            = "truncate"             // the body stops short of its Content-Length, then the connection closes
	SlowBody            = "slow_body"            // the body trickles at BytesPerSecond
	Garbage             = "garbage_then_close"   // bytes that are not HTTP, then the connection closes
	Latency             = "latency"              // wall-clock latency drawn from a distribution
	Status              = "status"               // a 429, 500 or 503 in the spec's error object, before the operation runs
	FileExpiry          = "file_expiry"          // file URLs older than TTLSeconds answer 403 (or 404)
	FileTruncate        = "file_truncate"        // a file's first whole download breaks; a Range request resumes it
	MCPSessionExpire    = "mcp_session_expire"   // the MCP session ends; its next request answers 404
	MCPStreamDrop       = "mcp_stream_drop"      // a tool call's event stream closes before its result
	MCPUnavailable      = "mcp_unavailable"      // the MCP endpoint answers 503 with Retry-After
	Evolve              = "evolve"               // the answer gains what the next additive release may add (package evolve)
	JobFailure          = "job_failure"          // a job created while the rule stands fails (queued or processing)
	FailureRate         = "failure_rate"         // the share of jobs that fail, instead of each model's rate
	PlatformFailure     = "platform_failure"     // deliveries to a social platform fail
	Moderation          = "moderation"           // a job's prompt is moderated: refused at creation, or failed later
	OutputFailure       = "output_failure"       // some outputs of a generation fail, each refunded
	AccountDisconnected = "account_disconnected" // a social account's delivery fails: reconnect it
)

// Targeting fields: whom a rule strikes and how often.
const (
	TargetClass       = "class"
	TargetOperation   = "operation"
	TargetModality    = "modality"
	TargetProbability = "probability"
	TargetFirst       = "first"
)

// Targets are the targeting fields, in the order the documents list them.
var Targets = []string{TargetClass, TargetOperation, TargetModality, TargetProbability, TargetFirst}

// A Kind is one fault kind: everything the server, its documents, its
// dashboard and its coverage know of it. A new kind is a row of kinds,
// its applier at its stage, and its test: control.json and the dashboard
// follow the row (TestControlDocumentFollowsTheKinds in the root package
// holds the document to it, and rewrites it with -update-control).
type Kind struct {
	Name  string
	Stage Stage
	// Classes are the path classes the kind strikes; nil: a job's or a
	// delivery's in the engine, not a request's.
	Classes []string
	// Params are the parameters the kind takes, beside the targeting.
	Params []string
	// Targets are the targeting fields it takes. A kind that strikes one
	// class alone accepts that class too.
	Targets []string
	// Doc says what the kind does, for control.json and the dashboard.
	Doc string
	// check validates what only this kind requires of its parameters.
	check func(s *Spec, bad badFunc)
}

type badFunc func(field, reason string, allowed ...any)

var allTargets = Targets

// kinds are the fault kinds, in the order the documents list them.
var kinds = []Kind{
	{Name: Reset, Stage: Deliver, Classes: Classes, Params: []string{"after_bytes"}, Targets: allTargets,
		Doc: "the connection is reset (TCP RST) after `after_bytes` of the response (0: before anything)."},
	{Name: EmptyReply, Stage: Deliver, Classes: Classes, Targets: allTargets,
		Doc: "the connection closes with no answer."},
	{Name: Truncate, Stage: Deliver, Classes: Classes, Params: []string{"after_bytes", "after_fraction"}, Targets: allTargets,
		Doc: "the body stops short of its Content-Length (after `after_bytes`, or `after_fraction`, half by default) and the connection closes."},
	{Name: SlowBody, Stage: Deliver, Classes: Classes, Params: []string{"bytes_per_second"}, Targets: allTargets,
		Doc:   "the body trickles at `bytes_per_second`.",
		check: func(s *Spec, bad badFunc) { required(s.BytesPerSecond > 0, "bytes_per_second", bad) }},
	{Name: Garbage, Stage: Deliver, Classes: Classes, Params: []string{"bytes"}, Targets: allTargets,
		Doc: "`bytes` of garbage, not HTTP, then the connection closes."},
	{Name: Latency, Stage: Delay, Classes: Classes, Params: []string{"distribution", "ms", "min_ms", "max_ms", "median_ms", "sigma"}, Targets: allTargets,
		Doc:   "wall-clock latency drawn from `distribution`, before the answer goes (`PUT /faults/latency/{operation}` makes a `fixed` one).",
		check: validateLatency},
	{Name: Status, Stage: Admit, Classes: Classes, Params: []string{"status"}, Targets: allTargets,
		Doc: "a 429, 500 or 503 in the error object, after authentication, the rate window and the scope, before the operation runs (nothing changes); `POST /faults/responses` makes one spent after `count` hits.",
		check: func(s *Spec, bad badFunc) {
			if s.Status != 429 && s.Status != 500 && s.Status != 503 {
				bad("status", "must be 429, 500 or 503", 429, 500, 503)
			}
		}},
	{Name: FileExpiry, Stage: Access, Classes: []string{Files}, Params: []string{"ttl_seconds", "expired_status"}, Targets: []string{TargetModality},
		Doc: "file addresses expire `ttl_seconds` on the simulated clock after they are handed out (a file read by an address without an expiry: after the file was made), then answer 403 `file_url_expired` (or 404); while the rule stands, file addresses carry `expires` and `signature`.",
		check: func(s *Spec, bad badFunc) {
			if t := s.TTLSeconds; t == nil || *t < 0 || *t > MaxTTLSeconds {
				bad("ttl_seconds", fmt.Sprintf("is required, between 0 and %d", MaxTTLSeconds))
			}
		}},
	{Name: FileTruncate, Stage: Deliver, Classes: []string{Files}, Params: []string{"after_bytes", "after_fraction"}, Targets: []string{TargetModality, TargetProbability, TargetFirst},
		Doc: "a file's first whole download breaks like `truncate`; a request with `Range` is served whole, so a client resumes."},
	{Name: MCPSessionExpire, Stage: Session, Classes: []string{MCP}, Targets: []string{TargetProbability, TargetFirst},
		Doc: "the MCP session ends; its request (and every later one) answers 404, and the client must initialize again."},
	{Name: MCPStreamDrop, Stage: Call, Classes: []string{MCP}, Targets: []string{TargetOperation, TargetModality, TargetProbability, TargetFirst},
		Doc: "a tool call's event stream closes before its result, after the call ran; the client resumes it with `Last-Event-ID` (protocol revisions with sessions), or reports the call failed (the sessionless revision)."},
	{Name: MCPUnavailable, Stage: Session, Classes: []string{MCP}, Params: []string{"retry_after_seconds"}, Targets: []string{TargetProbability, TargetFirst},
		Doc: "the MCP endpoint answers 503 `service_unavailable` with `Retry-After`."},
	{Name: Evolve, Stage: Shape, Classes: []string{API}, Params: []string{"fields", "enums", "headers", "reorder"}, Targets: []string{TargetOperation, TargetModality, TargetProbability, TargetFirst},
		Doc: "the answer gains what the service's next additive release may add, still valid against the document with its objects and enums open: every object an undeclared field (`fields`), one value of each of `status` (a running job's becomes `moderating`, a publication's or delivery's in flight `awaiting_review`; a terminal status never changes), `kind` (`sticker`), `modality` (`avatar`) and the error object's `code` (a more specific code of the same HTTP status) a value the document does not list (`enums`), undeclared headers (`headers`: `X-Service-Region`, `X-Api-Minor-Version`, `Server-Timing`) and the keys of every object in another order (`reorder`). Drawn from the seed; the journal's `evolved` names each change. It strikes the answers of the service's operations (class `api`), never the state: the next read of the same record evolves afresh.",
		check: func(s *Spec, bad badFunc) {
			if !Evolves(s.Fields) && !Evolves(s.Enums) && !Evolves(s.Headers) && !Evolves(s.Reorder) {
				bad("fields", "fields, enums, headers and reorder are all false: nothing would evolve; leave one out (on) or delete the rule")
			}
		}},
	{Name: JobFailure, Stage: Fate, Params: []string{"model", "stage", "code"}, Targets: []string{TargetModality, TargetProbability, TargetFirst},
		Doc: "a job (a generation's or an Encore creation's) created while the rule stands fails, at `stage`, with `code`; its credits are refunded. Decided at creation, in the simulation: the creation answers 201 as ever. `POST /faults/fail-next` makes one spent after `count` jobs."},
	{Name: FailureRate, Stage: Fate, Params: []string{"rate"},
		Doc: "the share of jobs that fail with `provider_error` while processing, instead of each model's and effect's own rate (0: none fails); a workspace's rule comes before the global one. Drawn from the seed and the job's id. `PUT /faults/failure-rate` makes it.",
		check: func(s *Spec, bad badFunc) {
			required(s.Rate != nil, "rate", bad)
		}},
	{Name: PlatformFailure, Stage: Publish, Params: []string{"platform"},
		Doc: "every delivery of a publication to `platform` (`all`: every platform) fails with `platform_error` while the rule stands. `PUT /faults/platforms/{platform}` makes it.",
		check: func(s *Spec, bad badFunc) {
			required(s.Platform != "", "platform", bad)
		}},
	{Name: Moderation, Stage: Fate, Params: []string{"model", "at"}, Targets: []string{TargetModality, TargetProbability, TargetFirst},
		Doc: "the service's moderation stops a job (a generation's or an Encore creation's) created while the rule stands: at `at` `creation` (default) the creation answers 422 `content_moderated`, nothing is created or charged and the ledger does not move; at `processing` it is accepted and charged, then fails with `content_moderated` and its credits are refunded."},
	{Name: OutputFailure, Stage: Fate, Params: []string{"model", "outputs"}, Targets: []string{TargetModality, TargetProbability, TargetFirst},
		Doc: "`outputs` of a generation of two or more outputs (1 by default, at most all but one) fail with `output_failed` while the others complete; each failed output's credits (the model's `credits_per_output`) are refunded, and the generation is `completed`. Generations of one output are not targeted."},
	{Name: AccountDisconnected, Stage: Publish, Params: []string{"platform", "social_account_id"}, Targets: []string{TargetProbability, TargetFirst},
		Doc: "a publication's delivery to the social account `social_account_id`, or to the accounts of `platform` (both: that account, on that platform), fails with `account_disconnected` while the other deliveries publish; the account then reads `publishable: false` (reconnect it in the app: a reset) and later publications to it answer 400.",
		check: func(s *Spec, bad badFunc) {
			if s.SocialAccountID == 0 && s.Platform == "" {
				bad("social_account_id", "give social_account_id or platform (or both: the account of that id on that platform)")
			}
			if s.Platform == "all" {
				bad("platform", "names one platform")
			}
		}},
}

func required(ok bool, field string, bad badFunc) {
	if !ok {
		bad(field, "is required")
	}
}

// Kinds are the fault kinds' names, in the order the documents list them.
var Kinds = func() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Name
	}
	return out
}()

// KindTable is every fault kind, in the order the documents list them.
func KindTable() []Kind { return slices.Clone(kinds) }

// KindNames lists the names of every kind, in the table's order.
func KindNames() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Name
	}
	return out
}

// RequestKinds are the kinds that strike requests (not jobs or deliveries
// in the engine): the failure paths of the coverage.
var RequestKinds = func() []string {
	var out []string
	for _, k := range kinds {
		if k.Classes != nil {
			out = append(out, k.Name)
		}
	}
	return out
}()

var byName = func() map[string]*Kind {
	m := map[string]*Kind{}
	for i := range kinds {
		m[kinds[i].Name] = &kinds[i]
	}
	return m
}()

// lookup is the row of a kind, nil when there is none.
func lookup(name string) *Kind { return byName[name] }

// Point is the point where a kind is decided.
func Point(kind string) Stage {
	if k := lookup(kind); k != nil {
		return k.Stage
	}
	return Deliver
}

// classes are the path classes a kind can strike.
func classes(kind string) []string {
	if k := lookup(kind); k != nil {
		return k.Classes
	}
	return nil
}

// validateKind checks what the row of a kind says of a spec: its
// parameters, its targeting, its own requirements.
func validateKind(s *Spec, k *Kind, bad badFunc) {
	for _, p := range paramsSet(s) {
		if !slices.Contains(k.Params, p) {
			bad(p, fmt.Sprintf("is not a parameter of %s (it takes %s)", s.Kind, listOr(k.Params, "none")))
		}
	}
	for _, t := range targeting(s) {
		switch {
		case slices.Contains(k.Targets, t), t == TargetClass && k.Classes != nil:
			// a class is checked below
		case k.Classes == nil:
			bad(t, fmt.Sprintf("%s is decided in the simulation, for jobs and deliveries, not requests: it takes %s", s.Kind, listOr(k.Targets, "no targeting")))
		default:
			bad(t, fmt.Sprintf("%s does not take %s (it takes %s)", s.Kind, t, listOr(k.Targets, "no targeting")))
		}
	}
	if s.Class != "" && k.Classes != nil && !slices.Contains(k.Classes, s.Class) {
		bad("class", fmt.Sprintf("%s strikes %s only", s.Kind, strings.Join(k.Classes, ", ")), anys(k.Classes)...)
	}
	if k.check != nil {
		k.check(s, bad)
	}
}

// targeting lists the targeting fields a spec sets.
func targeting(s *Spec) []string {
	var out []string
	for _, t := range []struct {
		name string
		on   bool
	}{{TargetClass, s.Class != ""}, {TargetOperation, s.Operation != ""}, {TargetModality, s.Modality != ""},
		{TargetProbability, s.Probability != nil}, {TargetFirst, s.First != 0}} {
		if t.on {
			out = append(out, t.name)
		}
	}
	return out
}
