package check

// Rule is one rule the checker holds an exchange to.
type Rule struct {
	ID      string
	Summary string
	// Source is whose the rule is: a section of the specification, or a
	// decision of this mock (docs/reference/decisions.md). A finding of an
	// openapi.* rule is labelled by where it is instead: the x-mock-decision of the schema, parameter or header it
	// is about, else the operation's section.
	Source Source
}

// Source says whose a finding is: the specification's (Label "spec", with
// the section that states the rule) or a decision this mock made where the
// specification is silent (Label "mock-decision", with the decision's id,
// D-1 ...). A team pointing the proxy at the real service reads the first
// as the service breaking the specification, the second as the mock's
// guess being wrong.
type Source struct {
	Label    string `json:"label"`
	Section  string `json:"section,omitempty"`
	Decision string `json:"decision,omitempty"`
}

// The labels of a Source.
const (
	LabelSpec         = "spec"
	LabelMockDecision = "mock-decision"
)

func spec(section string) Source { return Source{Label: LabelSpec, Section: section} }

func decision(id string) Source { return Source{Label: LabelMockDecision, Decision: id} }

// String is "spec (Errors)" or "mock-decision D-12".
func (s Source) String() string {
	if s.Label == LabelMockDecision {
		return s.Label + " " + s.Decision
	}
	return s.Label + " (" + s.Section + ")"
}

// The rules, in the order reports list them. The openapi.* rules are what
// openapi.json says; the others are what the specification states and a
// document cannot express.
const (
	RuleRequest     = "openapi.request"
	RuleOperation   = "openapi.operation"
	RuleStatus      = "openapi.status"
	RuleHeader      = "openapi.header"
	RuleContentType = "openapi.content_type"
	RuleBody        = "openapi.body"
	RuleRateHeaders = "ratelimit.headers"
	RuleRetryAfter  = "ratelimit.retry_after"
	RuleErrorObject = "error.object"
	RuleBalance     = "credits.balance"
	RuleGift        = "credits.gift"
	RuleStatusOrder = "status.forward"
	RuleListOrder   = "list.order"
	RuleListCursor  = "list.cursor"
)

// Rules lists every rule with what it checks and whose it is. The
// sections are the specification's headings: "Limits: Rate limit" is the
// Rate limit heading under Limits.
var Rules = []Rule{
	{RuleRequest, "a request that breaks openapi.json is refused (4xx), not served", spec("Endpoints")},
	{RuleOperation, "a request outside every operation is answered 404 or 405", decision("D-1")},
	{RuleStatus, "a success has the status the operation declares (201 for a POST, 200 otherwise)", spec("Endpoints")},
	{RuleHeader, "the headers the response declares are present and match their schema", spec("Endpoints")},
	{RuleContentType, "the body has a media type the response declares", spec("Endpoints")},
	{RuleBody, "the body matches the response's schema", spec("Endpoints")},
	{RuleRateHeaders, "every response to a known workspace carries X-RateLimit-Limit, -Remaining (at most the limit) and -Reset as integers", spec("Limits: Rate limit")},
	{RuleRetryAfter, "a 429 carries Retry-After in whole seconds", spec("Errors")},
	{RuleErrorObject, "every error status carries { error: { code, message } }", spec("Errors")},
	{RuleBalance, "credits_balance after a creation is the balance known just before minus credits_charged, when no other call of the workspace could spend in between", spec("Limits: Credits")},
	{RuleGift, "a creation covered by a monthly gift charges 0 credits", spec("Limits: Credits")},
	{RuleStatusOrder, "an asset's status only moves forward: queued, processing, then completed or failed", spec("States and transitions: Asset status")},
	{RuleListOrder, "GET /assets, /social/publications, /projects and /brand_kits list newest first (ids descending)", spec("Endpoints")},
	{RuleListCursor, "a page after starting_after=N holds only ids below N; has_more comes with next_cursor", spec("Resources and their fields: List envelope")},
}

// ruleSource is each rule's Source, by id.
var ruleSource = func() map[string]Source {
	m := make(map[string]Source, len(Rules))
	for _, r := range Rules {
		m[r.ID] = r.Source
	}
	return m
}()

// listOrderDecision: the specification says newest first for assets,
// projects and publications; for brand kits it is the mock's decision.
var listOrderDecision = map[string]string{"listBrandKits": "D-11"}
