package tlsca_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// The authority is made once and kept beside the state file; the leaf is
// made again when a host it must name is missing.
func TestTLSCertificateKeptBesideTheState(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	open := func(public string) *mediamock.Server {
		srv, err := mediamock.New(mediamock.Options{DBPath: db, TLS: true, PublicURL: public})
		require.NoError(t, err)
		return srv
	}
	srv := open("")
	ca := srv.CACertificate()
	assert.Equal(t, filepath.Join(dir, "state.db.tls", "ca.pem"), srv.CAFile())
	require.NoError(t, srv.Close())
	info, err := os.Stat(filepath.Join(dir, "state.db.tls", "key.pem"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the keys are private")

	srv = open("https://media.example.test")
	defer srv.Close()
	assert.Equal(t, ca, srv.CACertificate(), "the same authority: clients keep trusting it")
	leafPEM, err := os.ReadFile(filepath.Join(dir, "state.db.tls", "cert.pem"))
	require.NoError(t, err)
	block, _ := pem.Decode(leafPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	assert.NoError(t, leaf.VerifyHostname("media.example.test"), "the leaf names the public host now")
	assert.NoError(t, leaf.VerifyHostname("127.0.0.1"))
}
