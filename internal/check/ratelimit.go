package check

import (
	"net/http"
	"strconv"
)

// The rate-limit rules: the three X-RateLimit headers on every answer
// (ratelimit.headers), Retry-After on a 429 (ratelimit.retry_after).

// rateHeaders checks the three rate-limit headers.
func rateHeaders(c *verdict, h http.Header) {
	values := map[string]int64{}
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		v := h.Get(name)
		if exact := h[name]; len(exact) > 0 { // spelled as the spec writes it, not canonical
			v = exact[0]
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case v == "":
			c.add(RuleRateHeaders, "headers."+name, "every response carries %s", name)
		case err != nil || n < 0:
			c.add(RuleRateHeaders, "headers."+name, "%s %q is not a non-negative integer", name, v)
		default:
			values[name] = n
		}
	}
	limit, okL := values["X-RateLimit-Limit"]
	left, okR := values["X-RateLimit-Remaining"]
	if okL && okR && left > limit {
		c.add(RuleRateHeaders, "headers.X-RateLimit-Remaining", "%d requests left is above the limit of %d", left, limit)
	}
}

// retryAfter checks the Retry-After of a 429.
func retryAfter(c *verdict, h http.Header) {
	if v := h.Get("Retry-After"); v == "" {
		c.add(RuleRetryAfter, "headers.Retry-After", "a 429 must carry Retry-After")
	} else if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
		c.add(RuleRetryAfter, "headers.Retry-After", "Retry-After %q is not a whole number of seconds", v)
	}
}
