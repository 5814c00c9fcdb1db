package main

import (
	"context"
	"errors"
	"flag"
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
	"github.com/mediamock/mediamock/sim"
)

// startGCPercent is the collector's setting while the server starts.
const startGCPercent = 400

// startMemoryLimit is the soft memory limit while the server starts (a
// GOMEMLIMIT lower than it wins, and the limit set by GOMEMLIMIT comes
// back once the server is ready).
const startMemoryLimit = 32 << 20

// settings are the command's flags; each is also MOCKSERVER_<NAME>.
type settings struct {
	addr, db, clock, startTime, fixtures, publicURL, logFormat string
	seed, oauthApprove                                         uint64
	speed                                                      float64
	durable, reset, strict, evolve, fetchImages, coverage, tls bool
	exitWithParent                                             bool
	tlsCert, tlsKey                                            string
	controlToken, allowedHosts, fileSecret, logLevel           string
	journalSize, journalBody, maxSandboxes, mcpMaxWait         int
	maxBody                                                    int64
	shutdownTimeout, readTimeout, writeTimeout, idleTimeout    time.Duration
	source                                                     map[string]string // flag -> where its value came from
	// apiKey, url and control are the mcp command's: the key its stdio
	// session calls with, a running server to bridge to, and whether it
	// serves the control MCP server instead of the service's.
	apiKey, url string
	mcp         bool
	control     bool
}

// envName is the environment variable of a flag: --public-url is MOCKSERVER_PUBLIC_URL.
func envName(flagName string) string {
	return "MOCKSERVER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func parseSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*settings, error) {
	return parseCommand(false, args, getenv, stdout, stderr)
}

// parseCommand parses the settings of the serve command, or of the mcp
// command: the same flags (and variables), with a free loopback port and a
// temporary state file by default, and its own --api-key and --url.
func parseCommand(mcp bool, args []string, getenv func(string) string, stdout, stderr io.Writer) (*settings, error) {
	s, fs := serveFlags(mcp)
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
	s.source, err = applyEnv(fs, envName, getenv)
	return s, err
}

// serveFlags makes the flag set of the serve command, or of the mcp
// command, and the settings it parses into.
func serveFlags(mcp bool) (*settings, *flag.FlagSet) {
	name, addr, db := "mockserver", "127.0.0.1:8080", "mediamock.db"
	if mcp {
		name, addr, db = "mockserver mcp", "127.0.0.1:0", ""
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	s := &settings{mcp: mcp}
	fs.StringVar(&s.addr, "addr", addr, "listen address")
	if mcp {
		fs.StringVar(&s.db, "db", db, "bbolt state file (default: a temporary one, removed at exit)")
		fs.StringVar(&s.apiKey, "api-key", "", "API key or access token every tool call is made with (required, but with --control)")
		fs.StringVar(&s.url, "url", "", "bridge stdio to the MCP server of a running mockserver at this address, instead of running a simulation")
		fs.BoolVar(&s.control, "control", false, "serve the control MCP server (the control API as tools, /_mock/mcp) instead of the service's; its calls are made with --control-token")
	} else {
		fs.StringVar(&s.db, "db", db, "bbolt state file (kept across restarts)")
	}
	fs.BoolVar(&s.durable, "durable", false, "fsync every commit (slower, crash-safe)")
	fs.BoolVar(&s.reset, "reset", false, "wipe the state file and seed it again from the fixtures")
	fs.Uint64Var(&s.seed, "seed", 0, "seed of every random choice")
	fs.StringVar(&s.clock, "clock", "real", "clock mode: real, manual or virtual")
	fs.Float64Var(&s.speed, "speed", 10, "divides every simulated duration (10: jobs finish ten times faster)")
	fs.StringVar(&s.startTime, "start-time", "", "RFC 3339 time a new simulation starts at (default: now in real mode, 2026-01-05T09:00:00Z otherwise)")
	fs.StringVar(&s.fixtures, "fixtures", "", "fixture file (default: the embedded default)")
	fs.StringVar(&s.publicURL, "public-url", "", "base of the URLs the server hands out (default: the host the client used)")
	fs.Int64Var(&s.maxBody, "max-body-bytes", mediamock.DefaultMaxBodyBytes, "request body cap in bytes")
	fs.BoolVar(&s.strict, "strict", false, "validate every response against openapi.json")
	fs.BoolVar(&s.evolve, "evolve", false, "rehearse the service's next additive release: every answer gains unknown fields, enum values and headers, keys reordered (seeded; the journal names what was added)")
	fs.StringVar(&s.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.logLevel, "log-level", "info", "log level: debug, info (a line per request), warn or error")
	fs.BoolVar(&s.fetchImages, "fetch-images", false, "fetch https image URLs for real (default: a deterministic placeholder, no network)")
	fs.StringVar(&s.controlToken, "control-token", "", "protect the control API with this bearer token")
	fs.StringVar(&s.allowedHosts, "allowed-hosts", "", "comma-separated host names, besides loopback ones and the public URL's, that may reach the control API and appear in file URLs (* for any)")
	fs.StringVar(&s.fileSecret, "file-secret", "", "key file addresses and the signatures of expiring ones with this secret (HMAC), so they cannot be computed from the seed")
	fs.BoolVar(&s.tls, "tls", false, "serve https with a certificate made on first start and kept beside the state file (a local CA to trust, printed at start and served at "+mediamock.CAPath+")")
	fs.StringVar(&s.tlsCert, "tls-cert", "", "serve https with this PEM certificate (with its chain) instead; needs --tls-key")
	fs.StringVar(&s.tlsKey, "tls-key", "", "the PEM key of --tls-cert")
	fs.DurationVar(&s.readTimeout, "read-timeout", 60*time.Second, "longest time to read a whole request, body included")
	fs.DurationVar(&s.writeTimeout, "write-timeout", 90*time.Second, "longest time to write a whole response (above the longest wait_seconds, 55 s)")
	fs.DurationVar(&s.idleTimeout, "idle-timeout", 60*time.Second, "close keep-alive connections idle this long")
	fs.IntVar(&s.journalSize, "journal-size", 500, "requests the journal keeps (0 turns it off)")
	fs.IntVar(&s.journalBody, "journal-body-bytes", 4096, "bytes of each body the journal keeps")
	fs.IntVar(&s.maxSandboxes, "max-sandboxes", 1000, "how many sandboxes may exist at once (one more is refused with 409)")
	fs.IntVar(&s.mcpMaxWait, "mcp-max-wait", 0, "cap the wait_seconds of MCP tool calls (and the timeout of the control MCP server's wait_journal) at this many seconds, 1 to 55 (0: no cap); many MCP clients give up on a call after 60 s")
	fs.Uint64Var(&s.oauthApprove, "oauth-approve", 0, "approve every OAuth authorization request at once for this workspace id, without the consent page (for OAuth clients in tests)")
	fs.BoolVar(&s.coverage, "coverage-report", false, "print the coverage table to stderr at shutdown")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long requests in flight may take at shutdown")
	if !mcp {
		fs.BoolVar(&s.exitWithParent, "exit-with-parent", false, "stop when standard input ends: the process that started the server holds it open, and the system closes it when that process dies, even by SIGKILL (the npm and pip helpers use it)")
	}
	fs.Usage = func() { usage(fs, mcp) }
	return s, fs
}

// name is how the user gave a setting: --clock, or MOCKSERVER_CLOCK.
func (s *settings) name(flagName string) string {
	if n, ok := s.source[flagName]; ok {
		return n
	}
	return "--" + flagName
}

func (s *settings) options(log *slog.Logger) (mediamock.Options, error) {
	mode, err := sim.ParseClockMode(s.clock)
	if err != nil {
		return mediamock.Options{}, fmt.Errorf("%s: %v", s.name("clock"), err)
	}
	if s.speed <= 0 {
		return mediamock.Options{}, fmt.Errorf("%s must be above 0, got %v", s.name("speed"), s.speed)
	}
	if s.maxBody <= 0 {
		return mediamock.Options{}, fmt.Errorf("%s must be above 0, got %d", s.name("max-body-bytes"), s.maxBody)
	}
	var start time.Time
	if s.startTime != "" {
		if start, err = time.Parse(time.RFC3339, s.startTime); err != nil {
			return mediamock.Options{}, fmt.Errorf("%s: want RFC 3339 like 2026-01-05T09:00:00Z: %v", s.name("start-time"), err)
		}
	}
	if s.publicURL != "" && !strings.HasPrefix(s.publicURL, "http://") && !strings.HasPrefix(s.publicURL, "https://") {
		return mediamock.Options{}, fmt.Errorf("%s must start with http:// or https://, got %q", s.name("public-url"), s.publicURL)
	}
	if s.db == "" && !s.mcp {
		return mediamock.Options{}, fmt.Errorf("%s must name a file", s.name("db"))
	}
	if s.journalSize < 0 || s.journalBody < 0 {
		return mediamock.Options{}, fmt.Errorf("%s and %s must not be negative", s.name("journal-size"), s.name("journal-body-bytes"))
	}
	if s.mcpMaxWait < 0 || s.mcpMaxWait > 55 {
		return mediamock.Options{}, fmt.Errorf("%s must be between 0 and 55 seconds, got %d", s.name("mcp-max-wait"), s.mcpMaxWait)
	}
	if s.maxSandboxes < 1 {
		return mediamock.Options{}, fmt.Errorf("%s must be at least 1, got %d", s.name("max-sandboxes"), s.maxSandboxes)
	}
	if s.readTimeout <= 0 || s.writeTimeout <= 0 || s.idleTimeout <= 0 {
		return mediamock.Options{}, fmt.Errorf("%s, %s and %s must be above 0", s.name("read-timeout"), s.name("write-timeout"), s.name("idle-timeout"))
	}
	var hosts []string
	for _, h := range strings.Split(s.allowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	journal := s.journalSize
	if journal == 0 {
		journal = -1 // off
	}
	return mediamock.Options{
		Addr: s.addr, DBPath: s.db, Durable: s.durable, Reset: s.reset, Seed: s.seed, Clock: mode, StartTime: start,
		Speed: s.speed, FixturesPath: s.fixtures, PublicURL: s.publicURL, MaxBodyBytes: s.maxBody, Strict: s.strict, Evolve: s.evolve, Logger: log,
		FetchImages: s.fetchImages, ControlToken: s.controlToken, JournalSize: journal, JournalBodyBytes: s.journalBody,
		AllowedHosts: hosts, FileSecret: s.fileSecret, MaxSandboxes: s.maxSandboxes, MCPMaxWait: s.mcpMaxWait, OAuthApprove: s.oauthApprove, ReadTimeout: s.readTimeout, WriteTimeout: s.writeTimeout, IdleTimeout: s.idleTimeout,
		TLS: s.tls, TLSCert: s.tlsCert, TLSKey: s.tlsKey,
	}, nil
}

// newLogger makes the command's logger from --log-format and --log-level.
func (s *settings) newLogger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s.logLevel)); err != nil {
		return nil, fmt.Errorf("%s must be debug, info, warn or error, got %q", s.name("log-level"), s.logLevel)
	}
	o := &slog.HandlerOptions{Level: level}
	switch s.logFormat {
	case "text", "json":
		return slog.New(withRequestLines(w, s.logFormat == "json", o)), nil
	}
	return nil, fmt.Errorf("%s must be text or json, got %q", s.name("log-format"), s.logFormat)
}

// usage prints the command's subcommands and flags, each with its variable.
func usage(fs *flag.FlagSet, mcp bool) {
	w := fs.Output()
	if mcp {
		fmt.Fprintf(w, "Usage: mockserver mcp --api-key KEY [flags]\n       mockserver mcp --control [--control-token T] [flags]\n\n%s\n\nFlags (each also an environment variable):\n", mcpAbout)
	} else {
		usageCommands(w)
		fmt.Fprintf(w, "\n%s\n\nFlags (each also an environment variable; a flag wins over its variable):\n", serveAbout)
	}
	printFlags(w, fs, envName, 20)
}

// printFlags lists a command's flags for its --help: each with its
// environment variable, its help and its default (a zero one is not
// said), the names padded to width.
func printFlags(w io.Writer, fs *flag.FlagSet, env func(string) string, width int) {
	fs.VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  --%-*s %s\n      %s%s\n", width, f.Name, env(f.Name), f.Usage, def)
	})
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
	if s.exitWithParent {
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
	addrFile := s.db + ".addr"
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
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
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
	if s.coverage {
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
