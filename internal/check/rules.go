package check

// Rule is one rule the checker holds an exchange to.
type Rule struct {
	ID      string
	Summary string
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

// Rules lists every rule with what it checks.
var Rules = []Rule{
	{RuleRequest, "a request that breaks openapi.json is refused (4xx), not served"},
	{RuleOperation, "a request outside every operation is answered 404 or 405"},
	{RuleStatus, "the status is one the operation declares"},
	{RuleHeader, "the headers the response declares are present and match their schema"},
	{RuleContentType, "the body has a media type the response declares"},
	{RuleBody, "the body matches the response's schema"},
	{RuleRateHeaders, "every response to a known workspace carries X-RateLimit-Limit, -Remaining (at most the limit) and -Reset as integers"},
	{RuleRetryAfter, "a 429 carries Retry-After in whole seconds"},
	{RuleErrorObject, "every error status carries { error: { code, message } }"},
	{RuleBalance, "credits_balance after a creation is the balance known just before minus credits_charged, when no other call of the workspace could spend in between"},
	{RuleGift, "a creation covered by a monthly gift charges 0 credits"},
	{RuleStatusOrder, "an asset's status only moves forward: queued, processing, then completed or failed"},
	{RuleListOrder, "GET /assets, /social/publications, /projects and /brand_kits list newest first (ids descending)"},
	{RuleListCursor, "a page after starting_after=N holds only ids below N; has_more comes with next_cursor"},
}
