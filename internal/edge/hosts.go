package edge

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

// One policy guards every front a web browser can reach: the control API,
// the dashboard, the event stream, the MCP server and the files. (The
// service's own API is for any client: it needs a credential, and serves
// no browser.)
//
//   - Host (DNS rebinding): the Host must name this server: a loopback
//     address, localhost or a *.localhost name, an IP address (only names
//     can be rebound), the public URL's host, or a host of --allowed-hosts
//     ("*" allows any).
//   - Origin (cross-site pages): absent (not a browser, or a same-origin
//     GET), the very host the request was sent to, or a page served from a
//     loopback name, the public URL's host or an allowed host: a local
//     tool's page (the MCP inspector at localhost:6274) is welcome, a page
//     of another site is not, and neither is the opaque origin "null".

// hostname is the lower-case host of a Host header or URL host, without
// port, brackets or a trailing dot.
func hostname(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// named reports whether a host name is one the server answers to by name:
// localhost, a *.localhost name, a loopback address, or an allowed host
// (AllowedHosts holds the public URL's host; "*" allows any).
func (env *Env) named(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	return slices.Contains(env.AllowedHosts, host) || slices.Contains(env.AllowedHosts, "*")
}

// hostAllowed reports whether a Host names this server safely: a name it
// answers to (named) or an IP address. A web page that rebinds its own name
// to 127.0.0.1 sends its own name, and is refused.
func (env *Env) hostAllowed(hostport string) bool {
	host := hostname(hostport)
	if env.named(host) {
		return true
	}
	_, err := netip.ParseAddr(host)
	return err == nil
}

// OriginAllowed reports whether a browser's Origin may talk to the server:
// absent, the host the request was sent to, or a page served from a name
// the server answers to.
func (env *Env) OriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) || env.named(hostname(u.Host))
}

// Guard refuses, for every front a browser can reach, what a web page of
// another site could send: a Host that does not name this server, or an
// Origin that may not talk to it. what names the front in the error.
func (env *Env) Guard(r *http.Request, what string) error {
	if !env.hostAllowed(r.Host) {
		return &sim.Error{Kind: sim.EFORBIDDEN, Code: "forbidden_host",
			Message: "Host " + r.Host + " may not reach " + what + ": use a loopback address or name, an IP address, the public URL (--public-url), or add the host with --allowed-hosts (MOCKSERVER_ALLOWED_HOSTS)."}
	}
	if !env.OriginAllowed(r) {
		return &sim.Error{Kind: sim.EFORBIDDEN, Code: "forbidden_origin",
			Message: "Requests from the web page at " + r.Header.Get("Origin") + " may not reach " + what + ": only pages of this server, of loopback names, of the public URL or of --allowed-hosts may."}
	}
	return nil
}

// listenView is the view of requests whose Host is not trusted: links are
// built from the listen address.
func (env *Env) listenView() wire.View { return wire.View{Base: env.ListenURL, Eng: env.Eng} }
