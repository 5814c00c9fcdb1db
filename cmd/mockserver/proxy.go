package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/cli"
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

// proxySettings are the proxy command's flags, and where each value came
// from.
type proxySettings struct {
	*cli.Proxy
	source map[string]string
}

// name is how the user gave a setting: --addr, or MOCKSERVER_PROXY_ADDR.
func (s *proxySettings) name(flagName string) string {
	if n, ok := s.source[flagName]; ok {
		return n
	}
	return "--" + flagName
}

func parseProxySettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*proxySettings, error) {
	ps, fs := cli.ProxyFlags()
	s := &proxySettings{Proxy: ps}
	var err error
	if s.source, err = parseCommandLine(fs, args, cli.ProxyEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	name := s.name
	switch {
	case s.Upstream == "":
		return nil, fmt.Errorf("--upstream (or %s) is required: the base URL of the service to check", cli.ProxyEnvName("upstream"))
	case s.MaxValidate <= 0:
		return nil, fmt.Errorf("%s must be above 0, got %d", name("max-validate-bytes"), s.MaxValidate)
	case s.FailOn != "" && s.FailOn != proxy.FailOnViolation && s.FailOn != proxy.FailOnDrift:
		return nil, fmt.Errorf("%s must be %s or %s, got %q", name("fail-on"), proxy.FailOnViolation, proxy.FailOnDrift, s.FailOn)
	case s.Dial <= 0 || s.TLSHandshake <= 0 || s.ResponseHeader <= 0 || s.ReadHeader <= 0:
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
	log, err := (&settings{Serve: &cli.Serve{LogFormat: s.LogFormat, LogLevel: "info"}, source: map[string]string{"log-format": s.name("log-format")}}).newLogger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 2
	}
	var reports []io.Writer
	if s.ReportStderr {
		reports = append(reports, stderr)
	}
	if s.Report != "" {
		f, err := os.OpenFile(s.Report, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "mockserver proxy: report:", err)
			return 1
		}
		defer f.Close()
		reports = append(reports, f)
	}
	p, err := proxy.New(proxy.Options{
		Upstream: s.Upstream, Document: mediamock.OpenAPIDocument, MaxValidateBytes: s.MaxValidate,
		Report: io.MultiWriter(reports...), RecordDir: s.Record, Logger: log,
		Transport: check.NewTransport(check.Timeouts{Dial: s.Dial, TLSHandshake: s.TLSHandshake, ResponseHeader: s.ResponseHeader}),
	})
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 2
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 1
	}
	// No read or write timeout: uploads, downloads and long polls take the
	// time they take; the upstream's side is bounded by the transport.
	srv := &http.Server{Handler: p, ReadHeaderTimeout: s.ReadHeader, IdleTimeout: 120 * time.Second}
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
	sctx, cancel := context.WithTimeout(context.Background(), s.Shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
		srv.Close()
	}
	if err := p.Close(); err != nil {
		log.Error("record", "err", err)
		code = 1
	} else if s.Record != "" {
		log.Info("recorded", "fixture", s.Record+"/"+proxy.FixtureFile)
	}
	p.WriteSummary(stderr)
	if why := p.Summary().Failure(s.FailOn); why != "" {
		fmt.Fprintf(stderr, "mockserver proxy: exit 1: %s fails on %s: %s\n", s.name("fail-on"), s.FailOn, why)
		code = 1
	}
	return code
}
