package check

import (
	"net"
	"net/http"
	"time"
)

// Defaults of Timeouts.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 75 * time.Second // the longest wait_seconds (55) and a margin
)

// Timeouts bound the phases of reaching the upstream; zero fields take the
// defaults.
type Timeouts struct {
	Dial, TLSHandshake, ResponseHeader time.Duration
}

// NewTransport is a transport to the upstream: the system's proxy settings
// and root certificates, and the timeouts. The response header may take as
// long as the longest wait_seconds (55 s) and a margin; a body, once it
// flows, is not timed.
func NewTransport(t Timeouts) *http.Transport {
	if t.Dial <= 0 {
		t.Dial = DefaultDialTimeout
	}
	if t.TLSHandshake <= 0 {
		t.TLSHandshake = DefaultTLSHandshakeTimeout
	}
	if t.ResponseHeader <= 0 {
		t.ResponseHeader = DefaultResponseHeaderTimeout
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: t.Dial, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   t.TLSHandshake,
		ResponseHeaderTimeout: t.ResponseHeader,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
	}
}
