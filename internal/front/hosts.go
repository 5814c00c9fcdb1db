package front

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// hostname is the lower-case host of a Host header or URL host, without
// port, brackets or a trailing dot.
func hostname(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// HostAllowed reports whether a Host names this server safely: a loopback
// address, localhost, the public URL's host or an allowed host ("*" in
// AllowedHosts allows any). A web page that rebinds its own name to
// 127.0.0.1 sends its own name, and is refused.
func (env *Env) HostAllowed(hostport string) bool {
	host := hostname(hostport)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	return slices.Contains(env.AllowedHosts, host) || slices.Contains(env.AllowedHosts, "*")
}

// SameOrigin checks the Origin a browser sends: absent (not a browser, or
// a same-origin GET), or the very host the request was sent to.
func SameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// GuardPage refuses what a web page of another site could send: a foreign
// Host (DNS rebinding) or a foreign Origin. The control API and the
// dashboard use it; the service's API is for any client.
func (env *Env) GuardPage(r *http.Request) error {
	if !env.HostAllowed(r.Host) {
		return &sim.Error{Kind: sim.EFORBIDDEN, Code: "forbidden_host",
			Message: "Host " + r.Host + " may not reach the control API: use a loopback address or name, the public URL, or add the host with --allowed-hosts (MOCKSERVER_ALLOWED_HOSTS)."}
	}
	if !SameOrigin(r) {
		return &sim.Error{Kind: sim.EFORBIDDEN, Code: "forbidden_origin",
			Message: "Requests from the web page at " + r.Header.Get("Origin") + " may not reach the control API."}
	}
	return nil
}

// listenView is the view of requests whose Host is not trusted: links are
// built from the listen address.
func (env *Env) listenView() wire.View { return wire.View{Base: env.ListenURL, Eng: env.Eng} }
