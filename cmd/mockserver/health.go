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
	"time"
)

// runHealth asks a running server whether it is healthy: exit 0 when it
// answers 200 on its health endpoint, 1 otherwise. It needs no shell or curl,
// so a minimal container image can use it as its HEALTHCHECK.
func runHealth(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	h, fs := healthFlags(getenv)
	addr := getenv(envName("addr"))
	if err := parseFlags(fs, args, stdout, stderr); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	switch {
	case h.url != "":
	case addr != "":
		// An explicit setting wins over the address file, which a server
		// that was killed leaves behind.
		scheme := "http"
		if tlsOn(getenv) {
			scheme = "https"
		}
		h.url = scheme + "://" + dialAddr(addr)
	default:
		// The server writes the address it actually bound (--addr or
		// MOCKSERVER_ADDR, whichever it was given) beside its state file.
		if b, err := os.ReadFile(h.db + ".addr"); err == nil && strings.TrimSpace(string(b)) != "" {
			h.url = strings.TrimSpace(string(b))
		} else {
			h.url = defaultHealthURL
		}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(h.url, "/")+"/_mock/health", nil)
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy:", err)
		return 1
	}
	resp, err := healthClient(h.db, getenv).Do(req)
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

// defaultHealthURL is where health asks when nothing says where the
// server is.
const defaultHealthURL = "http://127.0.0.1:8080"

// healthSettings are the health command's flags.
type healthSettings struct {
	url, db string
	timeout time.Duration
}

// healthFlags makes the health command's flag set and the settings it
// parses into. Its flags read no variable of their own: --db defaults to
// the server's MOCKSERVER_DB, and without --url the address comes from the
// server's MOCKSERVER_ADDR (https with MOCKSERVER_TLS or
// MOCKSERVER_TLS_CERT).
func healthFlags(getenv func(string) string) (*healthSettings, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver health", flag.ContinueOnError)
	h := &healthSettings{}
	db := getenv(envName("db"))
	if db == "" {
		db = "mediamock.db"
	}
	fs.StringVar(&h.url, "url", "", "root address of the server (default: from "+envName("addr")+" when set, else the address the server wrote beside its state file, else "+defaultHealthURL+")")
	fs.StringVar(&h.db, "db", db, "the server's state file, beside which it writes the address it listens on")
	fs.DurationVar(&h.timeout, "timeout", 3*time.Second, "how long to wait for an answer")
	return h, fs
}

// tlsOn reports whether the server's settings in the environment serve
// https (MOCKSERVER_TLS, or a certificate of one's own).
func tlsOn(getenv func(string) string) bool {
	on, _ := strconv.ParseBool(getenv(envName("tls")))
	return on || getenv(envName("tls-cert")) != ""
}

// healthClient trusts what a server with --tls serves: the local
// authority it keeps beside its state file, or MOCKSERVER_TLS_CERT, besides
// the system's roots.
func healthClient(db string, getenv func(string) string) *http.Client {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range []string{db + ".tls/ca.pem", getenv(envName("tls-cert"))} {
		if f == "" {
			continue
		}
		if pem, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(pem)
		}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}
