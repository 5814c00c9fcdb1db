package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/proxy"
)

// runProxy runs the validating proxy in front of --upstream until ctx ends,
// then prints the summary. Its flags are also MOCKSERVER_PROXY_* variables.
func runProxy(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("mockserver proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	upstream := fs.String("upstream", "", "root address of the server to check, like https://api.example.com (required)")
	addr := fs.String("addr", "127.0.0.1:8081", "listen address")
	reportPath := fs.String("report", "-", "file that receives one JSON line per exchange with violations (- for stderr)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var envErr error
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		name := "MOCKSERVER_PROXY_" + strings.ToUpper(f.Name)
		if v := getenv(name); v != "" && !set[f.Name] && envErr == nil {
			envErr = f.Value.Set(v)
		}
	})
	u, err := url.Parse(*upstream)
	if envErr != nil || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "mockserver proxy: --upstream (MOCKSERVER_PROXY_UPSTREAM) must be an http:// or https:// address, got %q\n", *upstream)
		return 2
	}
	report := stderr
	if *reportPath != "-" {
		f, err := os.OpenFile(*reportPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "mockserver proxy:", err)
			return 2
		}
		defer f.Close()
		report = f
	}
	c, err := contract.Parse("openapi.json", mediamock.OpenAPIDocument)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 1
	}
	p := proxy.New(proxy.Options{Upstream: u, Contract: c, Report: report})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver proxy:", err)
		return 1
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(stderr, "mockserver proxy: http://%s -> %s (report: %s; summary: GET /_mock/proxy/report)\n", ln.Addr(), u.Redacted(), *reportPath)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	p.WriteSummary(stderr)
	return 0
}
