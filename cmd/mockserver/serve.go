package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/cli"
	"github.com/mediamock/mediamock/sim"
)

// startGCPercent is the collector's setting while the server starts.
const startGCPercent = 400

// startMemoryLimit is the soft memory limit while the server starts (a
// GOMEMLIMIT lower than it wins, and the limit set by GOMEMLIMIT comes
// back once the server is ready).
const startMemoryLimit = 32 << 20

// settings are the serve command's flags, or the mcp command's, and
// where each value came from.
type settings struct {
	*cli.Serve
	source map[string]string // flag -> where its value came from
}

func parseSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*settings, error) {
	return parseCommand(false, args, getenv, stdout, stderr)
}

// parseCommand parses the settings of the serve command, or of the mcp
// command: the same flags (and variables), with a free loopback port and a
// temporary state file by default, and its own --api-key and --url.
func parseCommand(mcp bool, args []string, getenv func(string) string, stdout, stderr io.Writer) (*settings, error) {
	sv, fs := cli.ServeFlags(mcp)
	s := &settings{Serve: sv}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		if mcp {
			return nil, fmt.Errorf("unexpected argument %q (mockserver mcp takes flags only)", fs.Arg(0))
		}
		return nil, fmt.Errorf("unknown command %q (commands: %s; mockserver --help says more)", fs.Arg(0), commands)
	}
	// Environment variables apply to the flags the command line left out.
	var err error
	s.source, err = applyEnv(fs, cli.EnvName, getenv)
	return s, err
}

// name is how the user gave a setting: --clock, or MOCKSERVER_CLOCK.
func (s *settings) name(flagName string) string {
	if n, ok := s.source[flagName]; ok {
		return n
	}
	return "--" + flagName
}

func (s *settings) options(log *slog.Logger) (mediamock.Options, error) {
	mode, err := sim.ParseClockMode(s.Clock)
	if err != nil {
		return mediamock.Options{}, fmt.Errorf("%s: %v", s.name("clock"), err)
	}
	if s.Speed <= 0 {
		return mediamock.Options{}, fmt.Errorf("%s must be above 0, got %v", s.name("speed"), s.Speed)
	}
	if s.MaxBody <= 0 {
		return mediamock.Options{}, fmt.Errorf("%s must be above 0, got %d", s.name("max-body-bytes"), s.MaxBody)
	}
	var start time.Time
	if s.StartTime != "" {
		if start, err = time.Parse(time.RFC3339, s.StartTime); err != nil {
			return mediamock.Options{}, fmt.Errorf("%s: want RFC 3339 like 2026-01-05T09:00:00Z: %v", s.name("start-time"), err)
		}
	}
	if s.PublicURL != "" && !strings.HasPrefix(s.PublicURL, "http://") && !strings.HasPrefix(s.PublicURL, "https://") {
		return mediamock.Options{}, fmt.Errorf("%s must start with http:// or https://, got %q", s.name("public-url"), s.PublicURL)
	}
	if s.DB == "" && !s.MCP {
		return mediamock.Options{}, fmt.Errorf("%s must name a file", s.name("db"))
	}
	if s.JournalSize < 0 || s.JournalBody < 0 {
		return mediamock.Options{}, fmt.Errorf("%s and %s must not be negative", s.name("journal-size"), s.name("journal-body-bytes"))
	}
	if s.MCPMaxWait < 0 || s.MCPMaxWait > 55 {
		return mediamock.Options{}, fmt.Errorf("%s must be between 0 and 55 seconds, got %d", s.name("mcp-max-wait"), s.MCPMaxWait)
	}
	if s.MaxSandboxes < 1 {
		return mediamock.Options{}, fmt.Errorf("%s must be at least 1, got %d", s.name("max-sandboxes"), s.MaxSandboxes)
	}
	if s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		return mediamock.Options{}, fmt.Errorf("%s, %s and %s must be above 0", s.name("read-timeout"), s.name("write-timeout"), s.name("idle-timeout"))
	}
	var hosts []string
	for _, h := range strings.Split(s.AllowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	journal := s.JournalSize
	if journal == 0 {
		journal = -1 // off
	}
	return mediamock.Options{
		Addr: s.Addr, DBPath: s.DB, Durable: s.Durable, Reset: s.Reset, Seed: s.Seed, Clock: mode, StartTime: start,
		Speed: s.Speed, FixturesPath: s.Fixtures, PublicURL: s.PublicURL, MaxBodyBytes: s.MaxBody, Strict: s.Strict, Evolve: s.Evolve, SnapshotPacks: s.Snapshots, Logger: log,
		FetchImages: s.FetchImages, ControlToken: s.ControlToken, JournalSize: journal, JournalBodyBytes: s.JournalBody,
		AllowedHosts: hosts, FileSecret: s.FileSecret, MaxSandboxes: s.MaxSandboxes, MCPMaxWait: s.MCPMaxWait, OAuthApprove: s.OAuthApprove, ReadTimeout: s.ReadTimeout, WriteTimeout: s.WriteTimeout, IdleTimeout: s.IdleTimeout,
		TLS: s.TLS, TLSCert: s.TLSCert, TLSKey: s.TLSKey,
	}, nil
}

// newLogger makes the command's logger from --log-format and --log-level.
func (s *settings) newLogger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s.LogLevel)); err != nil {
		return nil, fmt.Errorf("%s must be debug, info, warn or error, got %q", s.name("log-level"), s.LogLevel)
	}
	o := &slog.HandlerOptions{Level: level}
	switch s.LogFormat {
	case "text", "json":
		return slog.New(withRequestLines(w, s.LogFormat == "json", o)), nil
	}
	return nil, fmt.Errorf("%s must be text or json, got %q", s.name("log-format"), s.LogFormat)
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Starting allocates a few megabytes in many small pieces (the OpenAPI
	// document's parse most of all) while the heap is small: the collector
	// would run several times for nothing. It runs less often until the
	// server is ready, then as GOGC says.
	// A soft memory limit bounds what a large fixture's seeding lets the
	// heap grow to meanwhile: the collector runs more often only then.
	gogc, limit := debug.SetGCPercent(startGCPercent), debug.SetMemoryLimit(-1)
	if limit > startMemoryLimit {
		debug.SetMemoryLimit(startMemoryLimit)
	}
	ready := sync.OnceFunc(func() {
		debug.SetGCPercent(gogc)
		debug.SetMemoryLimit(limit)
		// What a large fixture's seeding left behind goes back to the
		// system now, not over the next minutes.
		go debug.FreeOSMemory()
	})
	defer ready()
	s, err := parseSettings(args, getenv, stdout, stderr)
	if code, stop := commandLine("mockserver", err, stderr); stop {
		return code
	}
	logOut, flushLog := bufferLog(stderr)
	defer flushLog()
	log, err := s.newLogger(logOut)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver:", err)
		return 2
	}
	if s.ExitWithParent {
		var stop context.CancelFunc
		ctx, stop = withParent(ctx, stdin, log)
		defer stop()
	}
	// Through the buffer, so that what New logged comes first.
	srv, opts, code := s.start(ctx, log, logOut)
	if srv == nil {
		return code
	}
	for _, k := range srv.DefaultKeys() {
		log.Debug("test key", "token", k.Token, "workspace", k.Workspace, "plan", k.Plan, "scopes", strings.Join(k.Scopes, " "))
	}
	addrFile := s.DB + ".addr"
	if err := os.WriteFile(addrFile, []byte(srv.URL()+"\n"), 0o644); err != nil {
		log.Warn("cannot write the address file for the health check", "file", addrFile, "err", err)
	} else {
		defer os.Remove(addrFile)
	}
	if ca := srv.CAFile(); ca != "" {
		log.Info("https with a local certificate authority: trust it to reach the server", "ca", ca, "download", srv.URL()+mediamock.CAPath,
			"curl", "curl --cacert "+ca, "node", "NODE_EXTRA_CA_CERTS="+ca, "python", "ssl.create_default_context(cafile=...)")
	}
	log.Info("mediamock ready", "url", srv.BaseURL(), "dashboard", srv.URL()+"/_mock/ui/", "clock", string(opts.Clock),
		"speed", strconv.FormatFloat(opts.Speed, 'g', -1, 64), "seed", opts.Seed, "db", opts.DBPath, "version", version, "keys", "mockserver keys")
	flushLog()
	ready()
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), s.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// start makes the options and starts a server. Without a server, code is
// the exit code: 2 for a bad setting, 1 for a server that could not start
// (said on stderr), 0 for a stop (SIGTERM, Ctrl-C) while the state was
// being made, which a seed cut short leaves for the next start to redo.
func (s *settings) start(ctx context.Context, log *slog.Logger, stderr io.Writer) (*mediamock.Server, mediamock.Options, int) {
	opts, err := s.options(log)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver:", err)
		return nil, opts, 2
	}
	if s.Coverage {
		opts.CoverageReport = stderr
	}
	opts.Stop = ctx.Done()
	srv, err := mediamock.New(opts)
	if errors.Is(err, mediamock.ErrStopped) {
		log.Info("stopped while starting", "err", err.Error())
		return nil, opts, 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "mockserver:", err)
		return nil, opts, 1
	}
	return srv, opts, 0
}
