package controlapi

// FaultSpec is a fault to inject: its kind, whom it targets, how often it
// strikes and the kind's parameters. A parameter belongs to some kinds
// alone; control.json's FaultSpec says which, and the server refuses a
// spec that gives another kind's. docs/how-to/rehearse-failures.md shows
// each kind.
type FaultSpec struct {
	// Kind is the fault: reset, empty_reply, truncate, slow_body,
	// garbage_then_close, latency, status, file_expiry, file_truncate,
	// mcp_session_expire, mcp_stream_drop, mcp_unavailable, evolve,
	// job_failure, failure_rate, platform_failure, moderation,
	// output_failure or account_disconnected.
	Kind string `json:"kind"`
	// Class targets requests of one class: api (the service's
	// operations), files (the files behind the URLs) or mcp; "" is every
	// class the kind strikes.
	Class string `json:"class,omitempty"`
	// Operation targets calls of one operationId, through REST or as an
	// MCP tool ("*": any; "": every request).
	Operation string `json:"operation,omitempty"`
	// Modality targets files of a modality (image, video, audio, 3d),
	// createGeneration calls that ask for it, or, for job_failure, jobs of
	// it (encore: Encore creations); "" matches any.
	Modality string `json:"modality,omitempty"`
	// Probability is the chance that a targeted request meets the fault;
	// nil means 1.
	Probability *float64 `json:"probability,omitempty"`
	// First, when set, spends the rule after it struck that many requests.
	First int `json:"first,omitempty"`
	// AfterBytes is where the body of reset, truncate and file_truncate
	// stops, in bytes.
	AfterBytes *int64 `json:"after_bytes,omitempty"`
	// AfterFraction is where the body of truncate and file_truncate stops,
	// as a fraction of it, instead of AfterBytes; half when neither is set.
	AfterFraction *float64 `json:"after_fraction,omitempty"`
	// BytesPerSecond is the pace of slow_body.
	BytesPerSecond int64 `json:"bytes_per_second,omitempty"`
	// Bytes is how much garbage garbage_then_close sends; 256 when 0.
	Bytes int64 `json:"bytes,omitempty"`
	// Distribution is latency's: fixed (MS), uniform (MinMS, MaxMS) or
	// lognormal (MedianMS, Sigma).
	Distribution string `json:"distribution,omitempty"`
	// MS is a fixed latency, in milliseconds.
	MS *int64 `json:"ms,omitempty"`
	// MinMS is the least latency of a uniform distribution, in milliseconds.
	MinMS *int64 `json:"min_ms,omitempty"`
	// MaxMS is the greatest latency of a uniform distribution, in
	// milliseconds.
	MaxMS *int64 `json:"max_ms,omitempty"`
	// MedianMS is the median latency of a lognormal distribution, in
	// milliseconds.
	MedianMS *int64 `json:"median_ms,omitempty"`
	// Sigma is the spread of a lognormal distribution's logarithm: the
	// larger, the longer the tail.
	Sigma *float64 `json:"sigma,omitempty"`
	// Status is what status answers: 429, 500 or 503.
	Status int `json:"status,omitempty"`
	// TTLSeconds is how long a file address lives under file_expiry, on the
	// simulated clock.
	TTLSeconds *int64 `json:"ttl_seconds,omitempty"`
	// ExpiredStatus is what an expired file address answers: 403 (when 0)
	// or 404.
	ExpiredStatus int `json:"expired_status,omitempty"`
	// RetryAfterSeconds is mcp_unavailable's Retry-After; 1 when nil.
	RetryAfterSeconds *int64 `json:"retry_after_seconds,omitempty"`
	// Fields turns evolve's undeclared fields on or off; nil is on.
	Fields *bool `json:"fields,omitempty"`
	// Enums turns evolve's unknown enum values on or off; nil is on.
	Enums *bool `json:"enums,omitempty"`
	// Headers turns evolve's undeclared headers on or off; nil is on.
	Headers *bool `json:"headers,omitempty"`
	// Reorder turns evolve's reordered keys on or off; nil is on.
	Reorder *bool `json:"reorder,omitempty"`
	// Model is the model id or effect slug of the jobs job_failure fails;
	// "" is any.
	Model string `json:"model,omitempty"`
	// FailStage is where job_failure fails a job: queued, or processing
	// (when "").
	FailStage string `json:"stage,omitempty"`
	// Code is the error code job_failure fails a job with; provider_error
	// when "".
	Code string `json:"code,omitempty"`
	// Rate is the share of jobs failure_rate fails, 0 to 1.
	Rate *float64 `json:"rate,omitempty"`
	// Platform is the platform whose deliveries platform_failure fails
	// ("all": every one), or whose accounts account_disconnected
	// disconnects.
	Platform string `json:"platform,omitempty"`
	// At is where moderation stops a job: creation (when ""), refused
	// with 422 content_moderated and nothing charged, or processing,
	// accepted, charged, then failed with content_moderated and refunded.
	At string `json:"at,omitempty"`
	// Outputs is how many outputs of a generation output_failure fails; 1
	// when 0, at most all but one.
	Outputs int `json:"outputs,omitempty"`
	// SocialAccountID is the social account account_disconnected
	// disconnects; 0: by Platform.
	SocialAccountID uint64 `json:"social_account_id,omitempty"`
}

// Spec is FaultSpec by the name FaultRule embeds it under: rule.Spec is
// the fault a rule injects.
type Spec = FaultSpec

// FaultRule is a fault kept in a scope, as Faults.Rules lists it: the
// spec's fields, with the rule's id and how many requests it matched and
// struck.
type FaultRule struct {
	// ID names the rule (flt_3) in the journal and in DELETE
	// /_mock/faults/rules/{id}.
	ID string `json:"id"`
	// Via names the shorthand endpoint that made the rule (fail-next,
	// failure-rate, platforms, latency, responses); "" for a rule added as
	// one.
	Via string `json:"via,omitempty"`
	// Scope is "global" for a global rule listed with a sandbox's or a
	// workspace's own (it strikes them too, after their own); empty for
	// the listed scope's own rules.
	Scope string `json:"scope,omitempty"`
	// Spec is the fault the rule injects; in JSON its fields are the
	// rule's own.
	Spec
	// Matched counts the requests (or jobs, or deliveries) the rule
	// targeted.
	Matched int64 `json:"matched"`
	// Hits counts those that met the fault.
	Hits int64 `json:"hits"`
}

// Faults is every injected fault of a scope, as GET /_mock/faults shows it:
// its rules, with the views of those the shorthand endpoints made, as
// those endpoints take them.
type Faults struct {
	// Scope is "global" (the faults every workspace meets), or the sandbox
	// ("sandbox sbx_1_4f0c9a2e") or workspace ("workspace 4") they are kept
	// for.
	Scope string `json:"scope"`
	// FailNext are the fail rules still to apply, in order.
	FailNext []FailRule `json:"fail_next"`
	// FailureRate overrides every model's failure rate; nil when not set.
	FailureRate *float64 `json:"failure_rate"`
	// FailPlatforms are the platforms whose deliveries fail ("all" for
	// every one).
	FailPlatforms []string `json:"fail_platforms"`
	// LatencyMS is the wall-clock latency added per operation ("*" for
	// every one), in milliseconds.
	LatencyMS map[string]int64 `json:"latency_ms"`
	// Forced are the forced responses still to come.
	Forced []ForcedResponse `json:"forced_responses"`
	// Rules are every fault rule of the scope (resets, truncations,
	// latency distributions, file expiry, MCP session loss, and those the
	// shorthands made), in the order they are tried.
	Rules []FaultRule `json:"rules"`
	// GlobalFaults, for a sandbox or a workspace, says whether global faults
	// are set too: they apply to it as well.
	GlobalFaults bool `json:"global_faults"`
}

// FailRule makes the next Count jobs that match it fail: what POST
// /_mock/faults/fail-next takes, and Faults.FailNext shows.
type FailRule struct {
	// Count is how many jobs fail; at least 1. Faults.FailNext shows how
	// many are still to fail.
	Count int `json:"count"`
	// Modality is image, video, audio, 3d or encore; "" matches any.
	Modality string `json:"modality,omitempty"`
	// Model is a model id or an effect slug; "" matches any.
	Model string `json:"model,omitempty"`
	// Stage is where the job fails: queued, or processing (the default).
	Stage string `json:"stage,omitempty"`
	// Code is the failure's code: provider_error (the default),
	// provider_unavailable, content_policy, timeout, or any other.
	Code string `json:"code,omitempty"`
}

// ForcedResponse answers the next Remaining requests of Operation ("*" for
// any) with Status: a rule POST /_mock/faults/responses made, as
// Faults.Forced shows it.
type ForcedResponse struct {
	// Operation is the operationId whose requests answer Status; "*" is any.
	Operation string `json:"operation"`
	// Status is 429, 500 or 503.
	Status int `json:"status"`
	// Remaining is how many requests still answer Status.
	Remaining int `json:"remaining"`
}
