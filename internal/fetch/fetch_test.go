package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

func TestRefuseEveryAddressThatIsNotPublic(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.255.255.254", "0.0.0.0", "0.1.2.3", "10.1.2.3", "172.16.5.5", "172.31.255.255", "192.168.0.10",
		"169.254.169.254", "100.64.1.1", "100.127.255.254", "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.19.255.255",
		"198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b:1::1", "2002:7f00:1::", "2002:a00:1::1", "2001::1",
		"2001:db8::1", "fc00::1", "fd12:3456:789a::1", "fe80::1", "fec0::1", "ff02::1", "100::1", "3fff::1",
		// IPv4-translated (::ffff:0:0:0/96), whatever the address it embeds.
		"::ffff:0:7f00:1", "::ffff:0:a00:1", "::ffff:0:a9fe:a9fe", "::ffff:0:808:808",
		// The 6to4 relay anycast, and 6to4, NAT64 and Teredo whatever they embed.
		"192.88.99.1", "192.88.99.255", "2002:808:808::1", "64:ff9b::808:808", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
		// The rest of the IETF protocol assignments (benchmarking, ORCHID, AMT) and the dummy prefix.
		"2001:2::1", "2001:10::1", "2001:20::1", "2001:3::1", "100:0:0:1::1",
	}
	allowed := []string{"1.1.1.1", "8.8.8.8", "93.184.216.34", "151.101.1.69", "2606:4700::1111", "2a00:1450:4001:81c::200e", "::ffff:8.8.8.8", "192.88.98.1", "192.88.100.1", "2001:200::1", "2620:fe::fe"}
	require.GreaterOrEqual(t, len(refused)+len(allowed), 40)
	for _, addr := range refused {
		err := refusePrivate("tcp", net.JoinHostPort(addr, "443"), nil)
		assert.True(t, errors.Is(err, errPrivateAddress), "%s must be refused", addr)
	}
	for _, addr := range allowed {
		assert.NoError(t, refusePrivate("tcp", net.JoinHostPort(addr, "443"), nil), "%s is public", addr)
	}
}

func TestFetchRefusesLoopbackServers(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the fetcher must not reach a loopback server")
	}))
	defer ts.Close()
	_, err := newRemoteImages().Resolve(context.Background(), ts.URL+"/photo.jpg")
	be := sim.AsError(err)
	require.Equal(t, "image_unavailable", be.Code, "%v", err)
	assert.Contains(t, be.Message, "not a public one")
}
