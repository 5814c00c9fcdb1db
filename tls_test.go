package mediamock_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// With TLS the server speaks https with a certificate of its making, its
// Client trusts it (like httptest.NewTLSServer's), its file addresses are
// https and still image sources, and a client without the authority fails
// as a TLS client should.
func TestTLSJourney(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithTLS())
	require.True(t, strings.HasPrefix(srv.URL(), "https://127.0.0.1:"), srv.URL())

	url := testkit.GeneratedImage(t, srv, mediamock.KeyAllScopes)
	assert.True(t, strings.HasPrefix(url, "https://"), url)
	data, _ := testkit.Fetch(t, srv, url)
	assert.NotEmpty(t, data)
	status, gen, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations",
		fmt.Sprintf(`{"modality":"video","model_id":"kling-2.5-i2v","prompt":"animate it","reference_image_urls":[%q]}`, url))
	assert.Equal(t, 201, status, "%v", gen)
	status, up, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/uploads", fmt.Sprintf(`{"image_url":%q}`, url))
	assert.Equal(t, 201, status, "%v", up)
	status, enc, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/encore/creations", fmt.Sprintf(`{"effect":"golden-hour","image_url":%q}`, url))
	assert.Equal(t, 201, status, "%v", enc)
	status, out, _ := testkit.REST(t, srv, mediamock.KeyBusiness, "POST", "/uploads", fmt.Sprintf(`{"image_url":%q}`, url))
	assert.Equal(t, 400, status, "another workspace's file: %v", out)

	// Without the authority, a client refuses the server.
	_, err := http.Get(srv.URL() + "/_mock/health")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate")

	// With the authority served at CAPath (and written to CAFile), it trusts it.
	resp, err := srv.Client().Get(srv.URL() + mediamock.CAPath)
	require.NoError(t, err)
	caPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "application/x-pem-file", resp.Header.Get("Content-Type"))
	onDisk, err := os.ReadFile(srv.CAFile())
	require.NoError(t, err)
	assert.Equal(t, onDisk, caPEM)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	own := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err = own.Get(strings.Replace(srv.URL(), "127.0.0.1", "localhost", 1) + "/_mock/health")
	require.NoError(t, err, "the leaf names localhost too")
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}

// A certificate of one's own: --tls-cert and --tls-key.
func TestTLSGivenCertificate(t *testing.T) {
	made := mediamock.RunT(t, mediamock.WithTLS())
	dir := filepath.Dir(made.CAFile())
	srv := mediamock.RunT(t, func(o *mediamock.Options) {
		o.TLSCert, o.TLSKey = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	})
	assert.Empty(t, srv.CAFile())
	require.True(t, strings.HasPrefix(srv.URL(), "https://"))
	resp, err := srv.Client().Get(srv.URL() + "/_mock/health")
	require.NoError(t, err, "Client trusts the given certificate")
	resp.Body.Close()
	_, err = mediamock.New(mediamock.Options{TLSCert: filepath.Join(dir, "cert.pem")})
	assert.ErrorContains(t, err, "both")
	_, err = mediamock.New(mediamock.Options{NoListener: true, TLS: true})
	assert.Error(t, err)
}
