// Package tlsca is a server's TLS: a certificate and key given to it, or
// a local certificate authority of its own making (made once, kept in a
// folder) and a leaf for the server's hosts, made again when a host is
// missing from it or it is near its end. For testing only.
package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The files of a made certificate, in the folder beside the state file
// (<state file>.tls): a local certificate authority, made once, and a leaf
// for the server's hosts, made again when a host is missing from it or it
// is near its end.
const (
	caFile      = "ca.pem"
	caKeyFile   = "ca-key.pem"
	leafFile    = "cert.pem"
	leafKeyFile = "key.pem"
)

// Lifetimes of the made certificates.
const (
	caLifetime   = 10 * 365 * 24 * time.Hour
	leafLifetime = 397 * 24 * time.Hour // the longest browsers accept
	leafRenewal  = 30 * 24 * time.Hour  // made again this close to its end
)

// Setting is a server's TLS setting: what it serves with and what a
// client of it trusts.
type Setting struct {
	// Config serves the certificate (HTTP/1.1 only).
	Config *tls.Config
	// Roots trust the server: the made authority, or the system's roots
	// and the given chain.
	Roots *x509.CertPool
	// CAPEM is the made authority, or the given chain's last certificate.
	CAPEM []byte
	// CAPath is the made authority's file; "" with a given certificate.
	CAPath string
}

// Setup loads the given certificate and key (certFile and keyFile, both
// or neither), or makes (or reuses) a local authority and a leaf for hosts
// in dir.
func Setup(certFile, keyFile, dir string, hosts []string) (*Setting, error) {
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return nil, errors.New("TLS needs both a certificate and its key (--tls-cert and --tls-key)")
		}
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		var last []byte
		for _, der := range pair.Certificate {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return nil, fmt.Errorf("TLS certificate: %w", err)
			}
			roots.AddCert(c)
			last = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		}
		return &Setting{Config: serverConfig(pair), Roots: roots, CAPEM: last}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("TLS folder: %w", err)
	}
	ca, caKey, caPEM, err := loadOrMakeCA(dir)
	if err != nil {
		return nil, err
	}
	pair, err := loadOrMakeLeaf(dir, ca, caKey, hosts)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	caPath := filepath.Join(dir, caFile)
	if abs, err := filepath.Abs(caPath); err == nil {
		caPath = abs
	}
	return &Setting{Config: serverConfig(pair), Roots: roots, CAPEM: caPEM, CAPath: caPath}, nil
}

// serverConfig serves HTTP/1.1 only: the connection-level faults (reset,
// garbage, truncation) take over the connection, which HTTP/2 does not
// allow.
func serverConfig(pair tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
}

func loadOrMakeCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	certPath, keyPath := filepath.Join(dir, caFile), filepath.Join(dir, caKeyFile)
	if certPEM, err := os.ReadFile(certPath); err == nil {
		cert, key, err := parsePair(certPEM, keyPath)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("the local certificate authority in %s: %w (remove the folder to make a new one)", dir, err)
		}
		return cert, key, certPEM, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "mediamock local CA " + now.UTC().Format("2006-01-02 15:04:05"), Organization: []string{"mediamock (testing only)"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writePair(certPath, certPEM, keyPath, key); err != nil {
		return nil, nil, nil, err
	}
	return cert, key, certPEM, nil
}

func loadOrMakeLeaf(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string) (tls.Certificate, error) {
	certPath, keyPath := filepath.Join(dir, leafFile), filepath.Join(dir, leafKeyFile)
	if certPEM, err := os.ReadFile(certPath); err == nil {
		if cert, _, err := parsePair(certPEM, keyPath); err == nil && leafFits(cert, ca, hosts) {
			return tls.LoadX509KeyPair(certPath, keyPath)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"mediamock (testing only)"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip, err := netip.ParseAddr(h); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(ip.AsSlice()))
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writePair(certPath, certPEM, keyPath, key); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certPath, keyPath)
}

// leafFits reports whether a leaf on disk still serves: signed by the
// authority, far from its end, naming every host.
func leafFits(leaf, ca *x509.Certificate, hosts []string) bool {
	if leaf.CheckSignatureFrom(ca) != nil || time.Until(leaf.NotAfter) < leafRenewal {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func parsePair(certPEM []byte, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, errors.New("not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, nil, errors.New("not a PEM key")
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, errors.New("the key is not the certificate's")
	}
	return cert, key, nil
}

func writePair(certPath string, certPEM []byte, keyPath string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certPath, certPEM, 0o644)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n.Add(n, big.NewInt(1))
}

// Hosts are the names a made leaf is for: loopback names and addresses,
// the listen host of addr, the public URL's host and the allowed hosts.
func Hosts(addr, publicURL string, allowed []string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	add := func(h string) {
		h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
		if h == "" || h == "*" || slices.Contains(hosts, h) {
			return
		}
		if ip, err := netip.ParseAddr(h); err == nil && ip.IsUnspecified() {
			return
		}
		hosts = append(hosts, h)
	}
	if h, _, err := net.SplitHostPort(addr); err == nil {
		add(h)
	}
	if u, err := url.Parse(publicURL); err == nil {
		add(u.Hostname())
	}
	for _, h := range allowed {
		add(strings.TrimSpace(h))
	}
	return hosts
}
