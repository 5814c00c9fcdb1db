package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
)

// The proxy command: a validating reverse proxy in front of any server of
// the API.
//
//	mockserver proxy --upstream https://api.example.com/api/v1 --report violations.jsonl
//	MOCKSERVER_PROXY_UPSTREAM=https://api.example.com/api/v1 mockserver proxy
//
// Each flag is also MOCKSERVER_PROXY_<NAME> (--record is MOCKSERVER_PROXY_RECORD):
// a prefix of its own, so that a proxy and a server configured in one
// environment do not take each other's MOCKSERVER_ADDR.

// proxyEnvName is the environment variable of a proxy flag.
func proxyEnvName(flagName string) string {
	return "MOCKSERVER_PROXY_" + strings.TrimPrefix(envName(flagName), "MOCKSERVER_")
}

// proxySettings are the proxy command's flags.
type proxySettings struct {
	upstream, addr, report, record, logFormat, failOn        string
	reportStderr                                             bool
	maxValidate                                              int64
	dial, tlsHandshake, responseHeader, shutdown, readHeader time.Duration
	source                                                   map[string]string
}

// name is how the user gave a setting: --addr, or MOCKSERVER_PROXY_ADDR.
func (s *proxySettings) name(flagName string) string {
	if n, ok := s.source[flagName]; ok {
		return n
	}
	return "--" + flagName
}

// proxyFlags makes the proxy command's flag set and the settings it
// parses into.
func proxyFlags() (*proxySettings, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver proxy", flag.ContinueOnError)
	s := &proxySettings{}
	fs.StringVar(&s.upstream, "upstream", "", "base URL of the service to check, like https://api.example.com/api/v1 (required)")
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8081", "listen address; clients use http://ADDR/api/v1")
	fs.StringVar(&s.report, "report", "", "append one JSON line per exchange with violations (or not fully checked) to this file")
	fs.BoolVar(&s.reportStderr, "report-stderr", true, "also write the report lines to stderr")
	fs.StringVar(&s.record, "record", "", "write the recorded account, models and completed assets to DIR/fixture.json, and each job's timing to DIR/timing.json, at shutdown")
	fs.Int64Var(&s.maxValidate, "max-validate-bytes", proxy.DefaultMaxValidateBytes, "bytes of one body kept for validation; larger bodies pass unchecked")
	fs.DurationVar(&s.dial, "dial-timeout", check.DefaultDialTimeout, "longest time to connect to the upstream")
	fs.DurationVar(&s.tlsHandshake, "tls-handshake-timeout", check.DefaultTLSHandshakeTimeout, "longest TLS handshake with the upstream")
	fs.DurationVar(&s.responseHeader, "response-header-timeout", check.DefaultResponseHeaderTimeout, "longest wait for the upstream's response header (above the longest wait_seconds, 55 s)")
	fs.DurationVar(&s.readHeader, "read-header-timeout", 10*time.Second, "longest time to read a client's request header")
	fs.DurationVar(&s.shutdown, "shutdown-timeout", 10*time.Second, "how long requests in flight may take at shutdown")
	fs.StringVar(&s.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.failOn, "fail-on", "", "exit 1 at shutdown when a finding of this severity or worse was seen: violation, or drift (violations included)")
	return s, fs
}

func parseProxySettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*proxySettings, error) {
	s, fs := proxyFlags()
	var err error
	if s.source, err = parseCommandLine(fs, args, proxyEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	name := s.name
	switch {
	case s.upstream == "":
		return nil, fmt.Errorf("--upstream (or %s) is required: the base URL of the service to check", proxyEnvName("upstream"))
	case s.maxValidate <= 0:
		return nil, fmt.Errorf("%s must be above 0, got %d", name("max-validate-bytes"), s.maxValidate)
	case s.failOn != "" && s.failOn != proxy.FailOnViolation && s.failOn != proxy.FailOnDrift:
		return nil, fmt.Errorf("%s must be %s or %s, got %q", name("fail-on"), proxy.FailOnViolation, proxy.FailOnDrift, s.failOn)
	case s.dial <= 0 || s.tlsHandshake <= 0 || s.responseHeader <= 0 || s.readHeader <= 0:
		return nil, fmt.Errorf("%s, %s, %s and %s must be above 0", name("dial-timeout"), name("tls-handshake-timeout"), name("response-header-timeout"), name("read-header-timeout"))
	}
	return s, nil
}

// applyEnv sets every flag the command line left out from its environment
// variable, and says where each value came from: --flag or the variable.
func applyEnv(fs *flag.FlagSet, env func(string) string, getenv func(string) string) (map[string]string, error) {
	source := map[string]string{}
	fs.Visit(func(f *flag.Flag) { source[f.Name] = "--" + f.Name })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if _, set := source[f.Name]; set || err != nil {
			return
		}
		if v := getenv(env(f.Name)); v != "" {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("invalid %s=%q: %v", env(f.Name), v, e)
			}
			source[f.Name] = env(f.Name)
		}
	})
	return source, err
}

func runProxy(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s, err := parseProxySettings(args, getenv, stdout, stderr)
	if code, stop := commandLine("mockserver proxy", err, stderr); stop {
		return code
	}
	log, err := (&settings{logFormat: s.logFormat, logLevel: "info", source: map[string]string{"log-format": s.name("log-format")}}).newLogger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 2
	}
	var reports []io.Writer
	if s.reportStderr {
		reports = append(reports, stderr)
	}
	if s.report != "" {
		f, err := os.OpenFile(s.report, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "mockserver proxy: report:", err)
			return 1
		}
		defer f.Close()
		reports = append(reports, f)
	}
	p, err := proxy.New(proxy.Options{
		Upstream: s.upstream, Document: mediamock.OpenAPIDocument, MaxValidateBytes: s.maxValidate,
		Report: io.MultiWriter(reports...), RecordDir: s.record, Logger: log,
		Transport: check.NewTransport(check.Timeouts{Dial: s.dial, TLSHandshake: s.tlsHandshake, ResponseHeader: s.responseHeader}),
	})
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 2
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 1
	}
	// No read or write timeout: uploads, downloads and long polls take the
	// time they take; the upstream's side is bounded by the transport.
	srv := &http.Server{Handler: p, ReadHeaderTimeout: s.readHeader, IdleTimeout: 120 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("mediamock proxy ready", "url", "http://"+ln.Addr().String()+check.BasePath, "upstream", p.Upstream(),
		"report", "http://"+ln.Addr().String()+proxy.ReportPath, "version", version)
	code := 0
	select {
	case <-ctx.Done():
	case err := <-served:
		log.Error("serve", "err", err)
		code = 1
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
		srv.Close()
	}
	if err := p.Close(); err != nil {
		log.Error("record", "err", err)
		code = 1
	} else if s.record != "" {
		log.Info("recorded", "fixture", s.record+"/"+proxy.FixtureFile)
	}
	p.WriteSummary(stderr)
	if why := p.Summary().Failure(s.failOn); why != "" {
		fmt.Fprintf(stderr, "mockserver proxy: exit 1: %s fails on %s: %s\n", s.name("fail-on"), s.failOn, why)
		code = 1
	}
	return code
}
