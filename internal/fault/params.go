package fault

import "strconv"

// A Param is a parameter of fault kinds (a field of Spec), as control.json
// describes it and the dashboard's form offers it.
type Param struct {
	Name string
	// Title is the form's label.
	Title string
	// Schema is its JSON schema in control.json, without title and
	// description.
	Schema string
	// Doc says what it does, naming the kinds that take it.
	Doc string
}

// params are the parameters of every kind, in the order the documents
// list them.
var params = []Param{
	{Name: "after_bytes", Title: "After bytes", Schema: `{"type": "integer", "minimum": 0, "format": "int64"}`,
		Doc: "`reset`, `truncate`, `file_truncate`: the bytes of the body sent before the break."},
	{Name: "after_fraction", Title: "Or after fraction", Schema: `{"type": "number", "minimum": 0, "exclusiveMaximum": true, "maximum": 1}`,
		Doc: "`truncate`, `file_truncate`: the fraction of the body sent before the break (instead of `after_bytes`); 0.5 when neither is given."},
	{Name: "bytes_per_second", Title: "Bytes per second", Schema: `{"type": "integer", "minimum": 1, "format": "int64"}`,
		Doc: "`slow_body`: the pace of the body, sent in chunks ten times a second."},
	{Name: "bytes", Title: "Garbage bytes", Schema: `{"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(MaxGarbageBytes) + `, "default": ` + strconv.Itoa(DefaultGarbage) + `}`,
		Doc: "`garbage_then_close`: how many bytes of garbage; " + strconv.Itoa(DefaultGarbage) + " when absent."},
	{Name: "distribution", Title: "Distribution", Schema: `{"type": "string", "enum": ["fixed", "uniform", "lognormal"]}`,
		Doc: "`latency`: `fixed` takes `ms`; `uniform` `min_ms` and `max_ms`; `lognormal` `median_ms` and `sigma` (a long tail). Every draw is capped at " + strconv.Itoa(MaxLatencyMS) + " ms (the limit of `PUT /faults/latency`)."},
	{Name: "ms", Title: "Milliseconds", Schema: msSchema, Doc: "`latency`, `fixed`: the latency."},
	{Name: "min_ms", Title: "Min ms", Schema: msSchema, Doc: "`latency`, `uniform`: the least latency."},
	{Name: "max_ms", Title: "Max ms", Schema: msSchema, Doc: "`latency`, `uniform`: the greatest latency."},
	{Name: "median_ms", Title: "Median ms", Schema: msSchema, Doc: "`latency`, `lognormal`: the median latency."},
	{Name: "sigma", Title: "Sigma", Schema: `{"type": "number", "minimum": 0, "maximum": 4}`,
		Doc: "`latency`, `lognormal`: the spread of the logarithm; the larger, the longer the tail."},
	{Name: "status", Title: "Status", Schema: `{"type": "integer", "enum": [429, 500, 503]}`,
		Doc: "`status`: the status to answer."},
	{Name: "ttl_seconds", Title: "TTL seconds", Schema: `{"type": "integer", "minimum": 0, "maximum": ` + strconv.Itoa(MaxTTLSeconds) + `}`,
		Doc: "`file_expiry`: how long a file address lives, on the simulated clock."},
	{Name: "expired_status", Title: "Expired status", Schema: `{"type": "integer", "enum": [403, 404], "default": 403}`,
		Doc: "`file_expiry`: 403 `file_url_expired` (default) or 404 `not_found`."},
	{Name: "retry_after_seconds", Title: "Retry-After seconds", Schema: `{"type": "integer", "minimum": 0, "maximum": 3600, "default": 1}`,
		Doc: "`mcp_unavailable`: the Retry-After; 1 when absent."},
	{Name: "fields", Title: "Unknown fields", Schema: `{"type": "boolean", "default": true}`,
		Doc: "`evolve`: undeclared fields in every object; absent or true: on, false: off. At least one part stays on."},
	{Name: "enums", Title: "Unknown enum values", Schema: `{"type": "boolean", "default": true}`,
		Doc: "`evolve`: unknown values of `status`, `kind`, `modality` and the error `code`; absent or true: on, false: off. At least one part stays on."},
	{Name: "headers", Title: "Extra headers", Schema: `{"type": "boolean", "default": true}`,
		Doc: "`evolve`: undeclared response headers; absent or true: on, false: off. At least one part stays on."},
	{Name: "reorder", Title: "Reordered keys", Schema: `{"type": "boolean", "default": true}`,
		Doc: "`evolve`: the keys of every object in another order; absent or true: on, false: off. At least one part stays on."},
	{Name: "model", Title: "Model", Schema: `{"type": "string", "minLength": 1, "maxLength": ` + strconv.Itoa(MaxName) + `}`,
		Doc: "`job_failure`, `moderation`, `output_failure`: only jobs of this model id or effect slug; absent: any."},
	{Name: "stage", Title: "Stage", Schema: `{"type": "string", "enum": ["queued", "processing"], "default": "processing"}`,
		Doc: "`job_failure`: where the job fails: `processing` (default) or `queued` (it never starts)."},
	{Name: "code", Title: "Code", Schema: `{"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"}`,
		Doc: "`job_failure`: the failure's error code: `provider_error` (default), `provider_unavailable`, `content_policy`, `timeout`, or any other."},
	{Name: "rate", Title: "Rate", Schema: `{"type": "number", "minimum": 0, "maximum": 1}`,
		Doc: "`failure_rate`: the share of jobs that fail, 0 to 1."},
	{Name: "platform", Title: "Platform", Schema: platformSchema,
		Doc: "`platform_failure`: the platform whose deliveries fail; `all`: every platform. `account_disconnected`: the platform whose accounts are disconnected."},
	{Name: "at", Title: "At", Schema: `{"type": "string", "enum": ["creation", "processing"], "default": "creation"}`,
		Doc: "`moderation`: `creation` (default): the creation is refused with 422 `content_moderated`, nothing charged; `processing`: the job is accepted and charged, then fails with `content_moderated` and is refunded."},
	{Name: "outputs", Title: "Outputs", Schema: `{"type": "integer", "minimum": 1, "maximum": 3, "default": 1}`,
		Doc: "`output_failure`: how many outputs of a generation fail; 1 when absent, at most all but one."},
	{Name: "social_account_id", Title: "Social account id", Schema: `{"type": "integer", "minimum": 1, "format": "int64"}`,
		Doc: "`account_disconnected`: the social account whose deliveries fail (with `platform` too: that account, on that platform)."},
}

const msSchema = `{"type": "integer", "minimum": 0, "maximum": 120000}`

var platformSchema = func() string {
	s := `{"type": "string", "enum": [`
	for i, p := range Platforms {
		if i > 0 {
			s += ", "
		}
		s += strconv.Quote(p)
	}
	return s + `]}`
}()

// ParamTable is every parameter of the kinds, in the order the documents
// list them.
func ParamTable() []Param { return append([]Param(nil), params...) }

// Shorthands: the control endpoints that make rules, as a rule's Via
// names them.
const (
	ViaFailNext    = "fail-next"    // POST /faults/fail-next: job_failure, spent after count jobs
	ViaFailureRate = "failure-rate" // PUT /faults/failure-rate: failure_rate
	ViaPlatforms   = "platforms"    // PUT /faults/platforms/{platform}: platform_failure
	ViaLatency     = "latency"      // PUT /faults/latency/{operation}: a fixed latency
	ViaResponses   = "responses"    // POST /faults/responses: a status for the next count requests
)

// A Shorthand is a control endpoint that makes rules of one kind.
type Shorthand struct {
	Via, Endpoint, Kind, Doc string
}

// Shorthands are the control endpoints that make rules.
var Shorthands = []Shorthand{
	{ViaFailNext, "POST /faults/fail-next", JobFailure, "a `job_failure` rule spent after `count` jobs (`fail_next` shows those still to fail)"},
	{ViaFailureRate, "PUT /faults/failure-rate", FailureRate, "the scope's one `failure_rate` rule (`failure_rate`)"},
	{ViaPlatforms, "PUT /faults/platforms/{platform}", PlatformFailure, "a `platform_failure` rule per platform (`fail_platforms`)"},
	{ViaLatency, "PUT /faults/latency/{operation}", Latency, "a `fixed` `latency` rule per operation (`latency_ms`)"},
	{ViaResponses, "POST /faults/responses", Status, "a `status` rule spent after `count` requests (`forced_responses`)"},
}
