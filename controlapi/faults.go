package controlapi

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
	// Status is a status the operation declares.
	Status int `json:"status"`
	// Remaining is how many requests still answer Status.
	Remaining int `json:"remaining"`
}
