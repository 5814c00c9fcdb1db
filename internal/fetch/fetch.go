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

var errPrivateAddress = errors.New("the address is private, loopback or link-local")

// refusePrivate refuses connections to addresses that are not public.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || cgnat.Contains(ip) {
		return errPrivateAddress
	}
	return nil
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

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
			return sim.Image{}, unavailable("its address is private, loopback or link-local")
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
