package cli

import (
	"flag"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
)

// ProxyEnvName is the environment variable of a proxy flag: a prefix of
// its own, MOCKSERVER_PROXY_, so that a proxy and a server configured in
// one environment do not take each other's MOCKSERVER_ADDR.
func ProxyEnvName(flagName string) string {
	return "MOCKSERVER_PROXY_" + strings.TrimPrefix(EnvName(flagName), "MOCKSERVER_")
}

// Proxy is what the proxy command's flags set.
type Proxy struct {
	Upstream, Addr, Report, Record, LogFormat, FailOn        string
	ReportStderr                                             bool
	MaxValidate                                              int64
	Dial, TLSHandshake, ResponseHeader, Shutdown, ReadHeader time.Duration
}

// ProxyFlags makes the proxy command's flag set and the settings it
// parses into.
func ProxyFlags() (*Proxy, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver proxy", flag.ContinueOnError)
	s := &Proxy{}
	fs.StringVar(&s.Upstream, "upstream", "", "base URL of the service to check, like https://api.example.com/api/v1 (required)")
	fs.StringVar(&s.Addr, "addr", "127.0.0.1:8081", "listen address; clients use http://ADDR/api/v1")
	fs.StringVar(&s.Report, "report", "", "append one JSON line per exchange with violations (or not fully checked) to this file")
	fs.BoolVar(&s.ReportStderr, "report-stderr", true, "also write the report lines to stderr")
	fs.StringVar(&s.Record, "record", "", "write the recorded account, models and completed assets to DIR/fixture.json, and each job's timing to DIR/timing.json, at shutdown")
	fs.Int64Var(&s.MaxValidate, "max-validate-bytes", proxy.DefaultMaxValidateBytes, "bytes of one body kept for validation; larger bodies pass unchecked")
	fs.DurationVar(&s.Dial, "dial-timeout", check.DefaultDialTimeout, "longest time to connect to the upstream")
	fs.DurationVar(&s.TLSHandshake, "tls-handshake-timeout", check.DefaultTLSHandshakeTimeout, "longest TLS handshake with the upstream")
	fs.DurationVar(&s.ResponseHeader, "response-header-timeout", check.DefaultResponseHeaderTimeout, "longest wait for the upstream's response header (above the longest wait_seconds, 55 s)")
	fs.DurationVar(&s.ReadHeader, "read-header-timeout", 10*time.Second, "longest time to read a client's request header")
	fs.DurationVar(&s.Shutdown, "shutdown-timeout", 10*time.Second, "how long requests in flight may take at shutdown")
	fs.StringVar(&s.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.FailOn, "fail-on", "", "exit 1 at shutdown when a finding of this severity or worse was seen: violation, or drift (violations included)")
	return s, fs
}
