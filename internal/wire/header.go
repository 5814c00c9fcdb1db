package wire

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/mediamock/mediamock/sim"
)

// SetRateHeaders reports a workspace's rate window in the X-RateLimit-*
// headers every response to an authenticated request carries.
func SetRateHeaders(h http.Header, d sim.RateDecision) {
	// One string holds the three numbers and one array the three values:
	// every answer carries them.
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], int64(d.Limit), 10)
	i := len(b)
	b = strconv.AppendInt(b, int64(d.Remaining), 10)
	j := len(b)
	b = strconv.AppendInt(b, d.Reset.Unix(), 10)
	all := string(b)
	vals := []string{all[:i], all[i:j], all[j:]}
	setValues(h, "X-RateLimit-Limit", vals[0:1:1])
	setValues(h, "X-RateLimit-Remaining", vals[1:2:2])
	setValues(h, "X-RateLimit-Reset", vals[2:3:3])
}

// SetHeader sets a header the spec names, spelled as the spec writes it
// (X-RateLimit-Limit, not Go's canonical X-Ratelimit-Limit): HTTP does not
// care, but grep and some clients' header maps do. Any canonical spelling
// set before goes. Read such a header back with HeaderValue. The name is a
// constant of the program: its canonical spelling is kept for good.
func SetHeader(h http.Header, name, value string) {
	setValues(h, name, []string{value})
}

func setValues(h http.Header, name string, values []string) {
	if c := canonical(name); c != name {
		delete(h, c)
	}
	h[name] = values
}

// canonicals are the canonical spellings of the names SetHeader was given,
// kept: the names are the spec's few, and http.CanonicalHeaderKey makes a
// new string for each one not already canonical.
var canonicals sync.Map // string -> string

func canonical(name string) string {
	if c, ok := canonicals.Load(name); ok {
		return c.(string)
	}
	c := http.CanonicalHeaderKey(name)
	canonicals.Store(name, c)
	return c
}

// HeaderValue reads a header set with SetHeader, or set any other way.
func HeaderValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return h.Get(name)
}
