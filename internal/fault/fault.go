// Package fault describes the faults a client may ask for below a
// well-formed answer, and decides which request meets which: a connection
// reset, an empty reply, a body cut short or trickling, garbage, a latency
// drawn from a distribution, a forced status, an expired or broken file
// download, a lost MCP session, a dropped MCP stream, an MCP server that is
// briefly unavailable; and, above a well-formed answer, the service's
// next additive release (evolve: unknown fields, enum values and headers,
// keys in another order).
//
// A fault is asked for as a Spec (controlapi.FaultSpec): once for one
// request (the Mock-Fault header) or as a Rule (controlapi.FaultRule) kept
// in a scope (the control API). Whether a rule's
// n-th matching request meets it is a function of the server's seed, the
// rule's place in its scope and n alone, so the same seed and the same
// requests meet the same faults, whatever else the server serves.
package fault

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/seed"
)

// Path classes: what a request is for.
const (
	API   = "api"   // the service's REST operations
	Files = "files" // the files behind the URLs
	MCP   = "mcp"   // the MCP endpoint
)

// Classes are the path classes.
var Classes = []string{API, Files, MCP}

// Modalities are the modalities a fault may target; a job_failure rule
// may target Encore creations too (JobModalities).
var Modalities = []string{"image", "video", "audio", "3d"}

// JobModalities are the modalities a job_failure rule may target: a
// generation's, or "encore" for Encore creations.
var JobModalities = append(slices.Clone(Modalities), "encore")

// JobStages are the stages where a job_failure rule fails a job.
var JobStages = []string{"queued", "processing"}

// ModerationPoints are where a moderation rule stops a job: at its
// creation (refused, nothing charged) or while processing (failed,
// refunded).
var ModerationPoints = []string{"creation", "processing"}

// Platforms are what a platform_failure rule may fail: one social platform
// of the service, or every one.
var Platforms = append(slices.Clone(fixtures.Platforms), "all")

// Distributions of a latency.
var Distributions = []string{"fixed", "uniform", "lognormal"}

// Limits of the parameters.
const (
	MaxLatencyMS    = 120_000 // the latency shorthand's limit, which its rules keep
	MaxGarbageBytes = 1 << 20 // garbage_then_close sends at most 1 MiB
	MaxTTLSeconds   = 366 * 86400
	DefaultGarbage  = 256
	DefaultFraction = 0.5
	MaxSigma        = 4.0
	MaxFirst        = 1_000_000
	MaxName         = 200 // a model id or effect slug
	MaxOutputs      = 3   // output_failure: all but one of the most outputs a generation has (4)
)

// codePattern is what a job failure's code looks like.
var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Spec is a fault as a client asks for it: a kind, whom it targets, how
// often it strikes and the kind's parameters. It is the control API's own
// type; what this package decides of it is in the functions below.
type Spec = controlapi.FaultSpec

// Evolves reports whether an evolve spec turns a part on: nil is on.
func Evolves(part *bool) bool { return part == nil || *part }

// Stage is where in a request's life a kind is decided.
type Stage int

const (
	// Admit: before the operation runs (status).
	Admit Stage = iota
	// Delay: when the answer is ready to go (latency).
	Delay
	// Deliver: while the answer is sent (reset, empty_reply, truncate,
	// slow_body, garbage_then_close, file_truncate).
	Deliver
	// Access: when a file is asked for (file_expiry).
	Access
	// Session: when an MCP request arrives (mcp_session_expire,
	// mcp_unavailable).
	Session
	// Call: when an MCP tool call has run (mcp_stream_drop).
	Call
	// Shape: when the answer is ready to go, before its delivery (evolve).
	Shape
	// Fate: when a job is created, in the simulation (job_failure,
	// failure_rate, moderation, output_failure).
	Fate
	// Publish: when a publication delivers to a platform, in the
	// simulation (platform_failure, account_disconnected).
	Publish
)

// paramsSet lists the parameters a spec sets.
func paramsSet(s *Spec) []string {
	var out []string
	add := func(name string, on bool) {
		if on {
			out = append(out, name)
		}
	}
	add("after_bytes", s.AfterBytes != nil)
	add("after_fraction", s.AfterFraction != nil)
	add("bytes_per_second", s.BytesPerSecond != 0)
	add("bytes", s.Bytes != 0)
	add("distribution", s.Distribution != "")
	add("ms", s.MS != nil)
	add("min_ms", s.MinMS != nil)
	add("max_ms", s.MaxMS != nil)
	add("median_ms", s.MedianMS != nil)
	add("sigma", s.Sigma != nil)
	add("status", s.Status != 0)
	add("ttl_seconds", s.TTLSeconds != nil)
	add("expired_status", s.ExpiredStatus != 0)
	add("retry_after_seconds", s.RetryAfterSeconds != nil)
	add("fields", s.Fields != nil)
	add("enums", s.Enums != nil)
	add("headers", s.Headers != nil)
	add("reorder", s.Reorder != nil)
	add("model", s.Model != "")
	add("stage", s.FailStage != "")
	add("code", s.Code != "")
	add("rate", s.Rate != nil)
	add("platform", s.Platform != "")
	add("at", s.At != "")
	add("outputs", s.Outputs != 0)
	add("social_account_id", s.SocialAccountID != 0)
	return out
}

// Validate checks a spec whole, in the field named `in` (body, header):
// every violation is reported, and nothing of a spec with one is kept.
// known tells which operationIds exist.
func Validate(s *Spec, in string, known func(string) bool) error {
	var v []problem.Violation
	bad := func(field, reason string, allowed ...any) {
		v = append(v, problem.Violation{In: in, Field: field, Reason: reason, Allowed: allowed})
	}
	k := lookup(s.Kind)
	if k == nil {
		if s.Kind == "" {
			bad("kind", "is required", anys(Kinds)...)
		} else {
			bad("kind", fmt.Sprintf("unknown fault kind %q", s.Kind), anys(Kinds)...)
		}
		return problem.InvalidError(v)
	}
	validateKind(s, k, bad)
	if s.Operation != "" && slices.Contains(k.Targets, TargetOperation) {
		switch {
		case s.Class == Files:
			bad("operation", "files are not operations: leave operation out, or target the api or mcp class")
		case s.Operation != "*" && !known(s.Operation):
			bad("operation", fmt.Sprintf("unknown operation %q", s.Operation))
		}
	}
	modalities := Modalities
	if s.Kind == JobFailure || s.Kind == Moderation {
		modalities = JobModalities
	}
	if s.Modality != "" && !slices.Contains(modalities, s.Modality) {
		bad("modality", fmt.Sprintf("unknown modality %q", s.Modality), anys(modalities)...)
	}
	if p := s.Probability; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		bad("probability", "must be between 0 and 1")
	}
	if s.First < 0 || s.First > MaxFirst {
		bad("first", fmt.Sprintf("must be between 0 and %d", MaxFirst))
	}
	if b := s.AfterBytes; b != nil && *b < 0 {
		bad("after_bytes", "must not be negative")
	}
	if f := s.AfterFraction; f != nil && (math.IsNaN(*f) || *f < 0 || *f >= 1) {
		bad("after_fraction", "must be at least 0 and below 1")
	}
	if s.AfterBytes != nil && s.AfterFraction != nil {
		bad("after_fraction", "give after_bytes or after_fraction, not both")
	}
	if s.Bytes < 0 || s.Bytes > MaxGarbageBytes {
		bad("bytes", fmt.Sprintf("must be between 1 and %d", MaxGarbageBytes))
	}
	if e := s.ExpiredStatus; e != 0 && e != 403 && e != 404 {
		bad("expired_status", "must be 403 or 404", 403, 404)
	}
	if r := s.RetryAfterSeconds; r != nil && (*r < 0 || *r > 3600) {
		bad("retry_after_seconds", "must be between 0 and 3600")
	}
	if len(s.Model) > MaxName {
		bad("model", fmt.Sprintf("must be at most %d characters", MaxName))
	}
	if s.FailStage != "" && !slices.Contains(JobStages, s.FailStage) {
		bad("stage", "must be queued or processing", anys(JobStages)...)
	}
	if s.Code != "" && !codePattern.MatchString(s.Code) {
		bad("code", "must be lower case letters, digits and underscores, starting with a letter, at most 64 characters")
	}
	if r := s.Rate; r != nil && (math.IsNaN(*r) || *r < 0 || *r > 1) {
		bad("rate", "must be between 0 and 1")
	}
	if s.Platform != "" && !slices.Contains(Platforms, s.Platform) {
		bad("platform", fmt.Sprintf("unknown platform %q", s.Platform), anys(Platforms)...)
	}
	if s.At != "" && !slices.Contains(ModerationPoints, s.At) {
		bad("at", "must be creation or processing", anys(ModerationPoints)...)
	}
	if s.Outputs < 0 || s.Outputs > MaxOutputs {
		bad("outputs", fmt.Sprintf("must be between 1 and %d", MaxOutputs))
	}
	if len(v) > 0 {
		return problem.InvalidError(v)
	}
	return nil
}

// validateLatency checks a latency spec's distribution and its parameters.
func validateLatency(s *Spec, bad badFunc) {
	ms := func(field string, p *int64, required bool) {
		switch {
		case p == nil && required:
			bad(field, "is required by the "+s.Distribution+" distribution")
		case p != nil && (*p < 0 || *p > MaxLatencyMS):
			bad(field, fmt.Sprintf("must be between 0 and %d", MaxLatencyMS))
		}
	}
	switch s.Distribution {
	case "fixed":
		ms("ms", s.MS, true)
	case "uniform":
		ms("min_ms", s.MinMS, true)
		ms("max_ms", s.MaxMS, true)
		if s.MinMS != nil && s.MaxMS != nil && *s.MinMS > *s.MaxMS {
			bad("max_ms", "must not be below min_ms")
		}
	case "lognormal":
		ms("median_ms", s.MedianMS, true)
		if s.Sigma == nil || math.IsNaN(*s.Sigma) || *s.Sigma < 0 || *s.Sigma > MaxSigma {
			bad("sigma", fmt.Sprintf("is required by the lognormal distribution, between 0 and %g", MaxSigma))
		}
	case "":
		bad("distribution", "is required", anys(Distributions)...)
		return
	default:
		bad("distribution", fmt.Sprintf("unknown distribution %q", s.Distribution), anys(Distributions)...)
		return
	}
	// A parameter of another distribution is a mistake, not a default.
	own := map[string][]string{"fixed": {"ms"}, "uniform": {"min_ms", "max_ms"}, "lognormal": {"median_ms", "sigma"}}[s.Distribution]
	for name, set := range map[string]bool{"ms": s.MS != nil, "min_ms": s.MinMS != nil, "max_ms": s.MaxMS != nil, "median_ms": s.MedianMS != nil, "sigma": s.Sigma != nil} {
		if set && !slices.Contains(own, name) {
			bad(name, "is not a parameter of the "+s.Distribution+" distribution")
		}
	}
}

// Request is what a decision knows of a request.
type Request struct {
	// Workspace is whose rules apply, when the front knows better than
	// the edge (0: the edge's).
	Workspace uint64
	Class     string
	Operation string
	Modality  string
	// Ranged is a file request with a Range header.
	Ranged bool
	// Session is an MCP request that carries a session id.
	Session bool
	// Path is the request's path (file_truncate breaks a file's first
	// download only).
	Path string
}

// matches reports whether a spec targets a request at point p.
func matches(s *Spec, p Stage, r Request) bool {
	if Point(s.Kind) != p || (s.Class != "" && s.Class != r.Class) || !slices.Contains(classes(s.Kind), r.Class) {
		return false
	}
	if s.Operation != "" && s.Operation != "*" && s.Operation != r.Operation {
		return false
	}
	if s.Modality != "" && s.Modality != r.Modality {
		return false
	}
	switch s.Kind {
	case FileTruncate:
		return !r.Ranged
	case MCPSessionExpire:
		return r.Session
	}
	return true
}

// Fits checks that a kind can strike a request of class (a Mock-Fault
// header on the request).
func Fits(kind, class string) error {
	if !slices.Contains(classes(kind), class) {
		return problem.InvalidError([]problem.Violation{{In: "header", Field: Header,
			Reason: fmt.Sprintf("%s strikes %s requests only; this is a request of the %s class", kind, strings.Join(classes(kind), ", "), class)}})
	}
	return nil
}

// ModalityOf is the modality of a file's media type.
func ModalityOf(mime string) string {
	switch kind, _, _ := strings.Cut(mime, "/"); kind {
	case "image", "video", "audio":
		return kind
	case "model":
		return "3d"
	}
	return ""
}

// Hit is a fault a request meets.
type Hit struct {
	Spec
	// Rule is the id of the rule that struck, or "header".
	Rule string
	// rng draws the hit's own random values (a latency, garbage bytes).
	rng *seed.RNG
}

// Standing is the hit of the server's standing evolve mode (--evolve) on
// a request, drawn from the server's seed and the request's id; the
// journal names its rule "server".
func Standing(serverSeed uint64, requestID string) *Hit {
	return &Hit{Spec: Spec{Kind: Evolve}, Rule: "server", rng: seed.For(serverSeed, "fault/evolve/"+requestID, 0)}
}

// Draws is the hit's own source of random values (what an evolve hit adds).
func (h *Hit) Draws() *seed.RNG { return h.rng }

// FromHeader is the hit of a Mock-Fault header, drawn from the server's
// seed and the request's id.
func FromHeader(s Spec, serverSeed uint64, requestID string) *Hit {
	return &Hit{Spec: s, Rule: "header", rng: seed.For(serverSeed, "fault/header/"+requestID, 0)}
}

// Strikes reports whether a header's fault strikes its request: it targets
// the request, and its probability, drawn from the request's id, says so.
func (h *Hit) Strikes(r Request) bool {
	if !matches(&h.Spec, Point(h.Kind), r) {
		return false
	}
	return h.Probability == nil || h.rng.Float64() < *h.Probability
}

// LatencyOf draws the hit's latency.
func (h *Hit) LatencyOf() time.Duration {
	ms := 0.0
	switch h.Distribution {
	case "fixed":
		ms = float64(*h.MS)
	case "uniform":
		ms = float64(*h.MinMS) + h.rng.Float64()*float64(*h.MaxMS-*h.MinMS)
	case "lognormal":
		// Box–Muller: a standard normal from two uniforms.
		u1, u2 := 1-h.rng.Float64(), h.rng.Float64()
		z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
		ms = float64(*h.MedianMS) * math.Exp(*h.Sigma*z)
	}
	return time.Duration(min(ms, MaxLatencyMS) * float64(time.Millisecond))
}

// Cut is where a body of n bytes stops: after_bytes, or after_fraction of
// it (half by default); never past its end.
func (h *Hit) Cut(n int64) int64 {
	switch {
	case h.AfterBytes != nil:
		return min(*h.AfterBytes, n)
	case h.AfterFraction != nil:
		return int64(float64(n) * *h.AfterFraction)
	case h.Kind == Reset:
		return 0
	}
	return int64(float64(n) * DefaultFraction)
}

// GarbageBytes draws the bytes garbage_then_close sends.
func (h *Hit) GarbageBytes() []byte {
	n := h.Bytes
	if n == 0 {
		n = DefaultGarbage
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(h.rng.Uint64())
	}
	return b
}

// ExpiredStatusOr is the status of an expired file URL: 403 unless 404 was asked for.
func (h *Hit) ExpiredStatusOr() int {
	if h.ExpiredStatus == 404 {
		return 404
	}
	return 403
}

// RetryAfter is the Retry-After of mcp_unavailable, 1 second by default.
func (h *Hit) RetryAfter() int64 {
	if h.RetryAfterSeconds != nil {
		return *h.RetryAfterSeconds
	}
	return 1
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func listOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}

// ruleID names the n-th rule of the server.
func ruleID(n uint64) string { return "flt_" + strconv.FormatUint(n, 10) }
