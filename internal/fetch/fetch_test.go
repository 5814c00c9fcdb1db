package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

func TestRefusePrivateAddresses(t *testing.T) {
	for addr, refused := range map[string]bool{
		"127.0.0.1:443": true, "[::1]:443": true, "10.1.2.3:443": true, "192.168.0.10:443": true, "172.16.5.5:443": true,
		"169.254.169.254:443": true, "100.64.1.1:443": true, "0.0.0.0:443": true, "[fe80::1]:443": true, "[::ffff:127.0.0.1]:443": true,
		"93.184.216.34:443": false, "[2606:4700::1111]:443": false,
	} {
		err := refusePrivate("tcp", addr, nil)
		assert.Equal(t, refused, errors.Is(err, errPrivateAddress), addr)
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
	assert.Contains(t, be.Message, "private, loopback or link-local")
}
