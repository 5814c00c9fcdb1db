package tlsca

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHosts(t *testing.T) {
	loopback := []string{"localhost", "127.0.0.1", "::1"}
	tests := []struct {
		name      string
		addr      string
		publicURL string
		allowed   []string
		want      []string
	}{
		{"loopback only", "127.0.0.1:0", "", nil, loopback},
		{"unspecified listen host is no name", "0.0.0.0:8080", "", nil, loopback},
		{"unspecified IPv6 too", "[::]:8080", "", nil, loopback},
		{"listen host", "Media.Example.Test.:8080", "", nil, append(loopback, "media.example.test")},
		{"public URL host", "127.0.0.1:0", "https://Pub.Example.Test:8443/base", nil, append(loopback, "pub.example.test")},
		{"allowed hosts, trimmed, star and duplicates dropped", "localhost:0", "", []string{" a.test ", "*", "", "A.TEST", "[::1]"},
			append(loopback, "a.test")},
		{"all three, in order", "10.0.0.7:80", "http://p.test", []string{"x.test"}, append(loopback, "10.0.0.7", "p.test", "x.test")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Hosts(tt.addr, tt.publicURL, tt.allowed))
		})
	}
}

// leaf reads the leaf certificate a made setting serves from dir.
func leaf(t *testing.T, dir string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, leafFile))
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block)
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}

func TestSetupMakesOnceAndRenewsTheLeafForANewHost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state.db.tls")
	first, err := Setup("", "", dir, []string{"localhost", "127.0.0.1"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, caFile), first.CAPath)
	assert.Equal(t, []string{"http/1.1"}, first.Config.NextProtos, "HTTP/1.1 only: the connection faults take the connection over")
	for _, f := range []string{caKeyFile, leafKeyFile} {
		info, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "%s is private", f)
	}
	ca, _ := pem.Decode(first.CAPEM)
	require.NotNil(t, ca)
	caCert, err := x509.ParseCertificate(ca.Bytes)
	require.NoError(t, err)
	assert.True(t, caCert.IsCA)
	firstLeaf := leaf(t, dir)
	_, err = firstLeaf.Verify(x509.VerifyOptions{Roots: first.Roots, DNSName: "localhost"})
	require.NoError(t, err, "the roots trust the leaf")

	same, err := Setup("", "", dir, []string{"localhost"})
	require.NoError(t, err)
	assert.Equal(t, first.CAPEM, same.CAPEM, "the authority is made once")
	assert.Equal(t, firstLeaf.SerialNumber, leaf(t, dir).SerialNumber, "a leaf naming every host is kept")

	more, err := Setup("", "", dir, []string{"localhost", "media.example.test"})
	require.NoError(t, err)
	assert.Equal(t, first.CAPEM, more.CAPEM)
	renewed := leaf(t, dir)
	assert.NotEqual(t, firstLeaf.SerialNumber, renewed.SerialNumber, "a host was missing: a new leaf")
	assert.NoError(t, renewed.VerifyHostname("media.example.test"))
	assert.NoError(t, renewed.CheckSignatureFrom(caCert))
}

func TestSetupGivenCertificate(t *testing.T) {
	dir := t.TempDir()
	made, err := Setup("", "", dir, []string{"localhost"})
	require.NoError(t, err)
	given, err := Setup(filepath.Join(dir, leafFile), filepath.Join(dir, leafKeyFile), "", nil)
	require.NoError(t, err)
	assert.Empty(t, given.CAPath, "no authority of its own")
	assert.NotEqual(t, made.CAPEM, given.CAPEM, "the chain's last certificate: the leaf")
	_, err = leaf(t, dir).Verify(x509.VerifyOptions{Roots: given.Roots, DNSName: "localhost"})
	assert.NoError(t, err, "the roots hold the given chain")

	for _, tt := range []struct{ name, cert, key, want string }{
		{"cert alone", filepath.Join(dir, leafFile), "", "both"},
		{"key alone", "", filepath.Join(dir, leafKeyFile), "both"},
		{"missing files", filepath.Join(dir, "nope.pem"), filepath.Join(dir, "nope-key.pem"), "TLS certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Setup(tt.cert, tt.key, "", nil)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestSetupRefusesADamagedAuthority(t *testing.T) {
	dir := t.TempDir()
	_, err := Setup("", "", dir, []string{"localhost"})
	require.NoError(t, err)
	other := t.TempDir()
	_, err = Setup("", "", other, []string{"localhost"})
	require.NoError(t, err)
	// The other authority's key is not this one's certificate's.
	key, err := os.ReadFile(filepath.Join(other, caKeyFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, caKeyFile), key, 0o600))
	_, err = Setup("", "", dir, []string{"localhost"})
	assert.ErrorContains(t, err, "remove the folder")
}
