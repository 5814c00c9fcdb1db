package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// remoteImages fetches https image URLs for real: an opt-in, because CI has
// no internet and a mock that fetches arbitrary URLs is an SSRF hole. It
// bounds the time, the size and the redirects, and refuses private,
// loopback and link-local addresses (checked on the connected address, so
// DNS tricks do not get around it).
type remoteImages struct {
	client *http.Client
}

// Limits of fetching.
const (
	fetchTimeout      = 10 * time.Second
	fetchMaxRedirects = 3
)

func newRemoteImages() *remoteImages {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: refusePrivate}
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 5 * time.Second,
		MaxIdleConns:          8,
		Proxy:                 nil, // a proxy would hide the destination from the address check
	}
	return &remoteImages{client: &http.Client{
		Transport: transport,
		Timeout:   fetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= fetchMaxRedirects {
				return fmt.Errorf("more than %d redirects", fetchMaxRedirects)
			}
			if req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a non-https address")
			}
			return nil
		},
	}}
}

var errPrivateAddress = errors.New("the address is not a public one (private, loopback, link-local or reserved)")

// refusePrivate refuses connections to every address that is not global
// unicast, including IPv4 addresses embedded in IPv6 forms.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if !Public(ip) {
		return errPrivateAddress
	}
	return nil
}

// nonPublic are the ranges that are not global unicast beyond what netip
// reports: shared, benchmarking, documentation, reserved, translation,
// tunnel and protocol ranges (IANA special-purpose registries). No image
// host lives in them.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // this network
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated): reaches whatever relay is nearest
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	// IPv6 forms that embed an IPv4 address or reach one through a
	// translator or a tunnel are refused whole, whatever they embed: the
	// translator may sit on the mock's own network.
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT); IPv4-mapped is unmapped first
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("100:0:0:1::/64"),  // dummy prefix
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fec0::/10"),       // site local (deprecated)
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("5f00::/16"),       // segment routing
}

// Public reports whether an address is global unicast and in no special
// range: the only addresses the fetcher connects to.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Resolve fetches the image at url.
func (ri *remoteImages) Resolve(ctx context.Context, url string) (sim.Image, error) {
	unavailable := func(reason string) error {
		return &sim.Error{Kind: sim.EINVALID, Code: "image_unavailable", Message: fmt.Sprintf("The image at %s cannot be fetched: %s.", url, reason)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return sim.Image{}, unavailable(err.Error())
	}
	req.Header.Set("Accept", "image/jpeg, image/png, image/webp")
	resp, err := ri.client.Do(req)
	if err != nil {
		if errors.Is(err, errPrivateAddress) {
			return sim.Image{}, unavailable("its address is not a public one (private, loopback, link-local or reserved)")
		}
		return sim.Image{}, unavailable(err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sim.Image{}, unavailable("the server answered " + resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, sim.MaxImageBytes+1))
	if err != nil {
		return sim.Image{}, unavailable(err.Error())
	}
	if len(data) > sim.MaxImageBytes {
		return sim.Image{}, &sim.Error{Kind: sim.ETOOLARGE, Code: "file_too_large",
			Message: fmt.Sprintf("The image at %s is over 10 MiB.", url), Details: map[string]any{"limit_bytes": sim.MaxImageBytes}}
	}
	return sim.Image{Data: data}, nil
}
