package oauth

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
)

// The rate limit of /oauth/*, per client address, on the wall clock.

// RateLimit is how many requests one client address may send to /oauth/*
// in a minute of wall time; past it the answer is 429 rate_limited with
// Retry-After. It is generous: a test suite's clients never meet it.
const RateLimit = 600

// window counts one client address's requests in a minute of wall time.
type window struct {
	start time.Time
	n     int
}

// clientAddr is the address a request came from, without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// admit counts a request of /oauth/* against its address's window; past
// the limit it answers 429 and reports false.
func (s *Server) admit(w *edge.Writer, r *http.Request) bool {
	limit := s.RateLimit
	if limit <= 0 {
		limit = RateLimit
	}
	addr, now := clientAddr(r), s.wall()
	s.mu.Lock()
	win := s.windows[addr]
	if win == nil || now.Sub(win.start) >= time.Minute || now.Before(win.start) {
		win = &window{start: now}
		s.windows[addr] = win
	}
	win.n++
	over, retry := win.n > limit, win.start.Add(time.Minute).Sub(now)
	s.mu.Unlock()
	if !over {
		return true
	}
	tooMany(w, retry, "Too many requests to the authorization server from "+addr+": "+strconv.Itoa(limit)+" a minute at most.")
	return false
}

// tooMany answers 429 rate_limited, in OAuth's error format, with
// Retry-After in seconds.
func tooMany(w *edge.Writer, retry time.Duration, description string) {
	secs := int((retry + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	oauthError(w, http.StatusTooManyRequests, "rate_limited", description+" Retry after "+strconv.Itoa(secs)+" s.")
}
