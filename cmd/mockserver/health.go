package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/cli"
)

// runHealth asks a running server whether it is healthy: exit 0 when it
// answers 200 on its health endpoint, 1 otherwise. It needs no shell or curl,
// so a minimal container image can use it as its HEALTHCHECK.
func runHealth(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	h, fs := cli.HealthFlags(getenv)
	addr := getenv(cli.EnvName("addr"))
	if err := parseFlags(fs, args, stdout, stderr); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	switch {
	case h.URL != "":
	case addr != "":
		// An explicit setting wins over the address file, which a server
		// that was killed leaves behind.
		scheme := "http"
		if tlsOn(getenv) {
			scheme = "https"
		}
		h.URL = scheme + "://" + dialAddr(addr)
	default:
		// The server writes the address it actually bound (--addr or
		// MOCKSERVER_ADDR, whichever it was given) beside its state file.
		if b, err := os.ReadFile(h.DB + ".addr"); err == nil && strings.TrimSpace(string(b)) != "" {
			h.URL = strings.TrimSpace(string(b))
		} else {
			h.URL = cli.DefaultHealthURL
		}
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(h.URL, "/")+"/_mock/health", nil)
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy:", err)
		return 1
	}
	resp, err := healthClient(h.DB, getenv).Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "unhealthy: %s: %s\n", resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintln(stdout, "healthy:", strings.TrimSpace(string(body)))
	return 0
}

// dialAddr turns a listen address into one to dial: an empty or unspecified
// host (":8080", "0.0.0.0:8080", "[::]:8080") becomes loopback.
func dialAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// tlsOn reports whether the server's settings in the environment serve
// https (MOCKSERVER_TLS, or a certificate of one's own).
func tlsOn(getenv func(string) string) bool {
	on, _ := strconv.ParseBool(getenv(cli.EnvName("tls")))
	return on || getenv(cli.EnvName("tls-cert")) != ""
}

// healthClient trusts what a server with --tls serves: the local
// authority it keeps beside its state file, or MOCKSERVER_TLS_CERT, besides
// the system's roots.
func healthClient(db string, getenv func(string) string) *http.Client {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range []string{db + ".tls/ca.pem", getenv(cli.EnvName("tls-cert"))} {
		if f == "" {
			continue
		}
		if pem, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(pem)
		}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}
