package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/mediamock/mediamock"
)

// Serve is what the serve command's flags set, and the mcp command's:
// each field is the flag of its name (Addr is --addr), and each flag is
// also MOCKSERVER_<NAME> (EnvName).
type Serve struct {
	Addr, DB, Clock, StartTime, Fixtures, PublicURL, LogFormat string
	Seed, OAuthApprove                                         uint64
	Speed                                                      float64
	Durable, Reset, Strict, Evolve, FetchImages, Coverage, TLS bool
	ExitWithParent                                             bool
	TLSCert, TLSKey                                            string
	ControlToken, AllowedHosts, FileSecret, LogLevel           string
	JournalSize, JournalBody, MaxSandboxes, MCPMaxWait         int
	MaxBody                                                    int64
	ShutdownTimeout, ReadTimeout, WriteTimeout, IdleTimeout    time.Duration
	// APIKey, URL and Control are the mcp command's: the key its stdio
	// session calls with, a running server to bridge to, and whether it
	// serves the control MCP server instead of the service's. MCP says
	// the settings are the mcp command's.
	APIKey, URL string
	MCP         bool
	Control     bool
	// Snapshots are the snapshot packs --snapshot names, in order.
	Snapshots Packs
}

// Packs is a repeatable flag: each value (or each of its comma-separated
// parts, as its variable gives several) is one more.
type Packs []string

// String lists the values, separated by commas.
func (p *Packs) String() string { return strings.Join(*p, ",") }

// Set adds a value, or its comma-separated parts.
func (p *Packs) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*p = append(*p, part)
		}
	}
	return nil
}

// ServeFlags makes the flag set of the serve command, or of the mcp
// command, and the settings it parses into.
func ServeFlags(mcp bool) (*Serve, *flag.FlagSet) {
	name, addr, db := "mockserver", "127.0.0.1:8080", "mediamock.db"
	if mcp {
		name, addr, db = "mockserver mcp", "127.0.0.1:0", ""
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	s := &Serve{MCP: mcp}
	fs.StringVar(&s.Addr, "addr", addr, "listen address")
	if mcp {
		fs.StringVar(&s.DB, "db", db, "bbolt state file (default: a temporary one, removed at exit)")
		fs.StringVar(&s.APIKey, "api-key", "", "API key or access token every tool call is made with (required, but with --control)")
		fs.StringVar(&s.URL, "url", "", "bridge stdio to the MCP server of a running mockserver at this address, instead of running a simulation")
		fs.BoolVar(&s.Control, "control", false, "serve the control MCP server (the control API as tools, /_mock/mcp) instead of the service's; its calls are made with --control-token")
	} else {
		fs.StringVar(&s.DB, "db", db, "bbolt state file (kept across restarts)")
	}
	fs.BoolVar(&s.Durable, "durable", false, "fsync every commit (slower, crash-safe)")
	fs.BoolVar(&s.Reset, "reset", false, "wipe the state file and seed it again from the fixtures")
	fs.Uint64Var(&s.Seed, "seed", 0, "seed of every random choice")
	fs.StringVar(&s.Clock, "clock", "real", "clock mode: real, manual or virtual")
	fs.Float64Var(&s.Speed, "speed", 10, "divides every simulated duration (10: jobs finish ten times faster)")
	fs.StringVar(&s.StartTime, "start-time", "", "RFC 3339 time a new simulation starts at (default: now in real mode, 2026-01-05T09:00:00Z otherwise)")
	fs.StringVar(&s.Fixtures, "fixtures", "", "fixture file (default: the embedded default)")
	fs.StringVar(&s.PublicURL, "public-url", "", "base of the URLs the server hands out (default: the host the client used)")
	fs.Int64Var(&s.MaxBody, "max-body-bytes", mediamock.DefaultMaxBodyBytes, "request body cap in bytes")
	fs.BoolVar(&s.Strict, "strict", false, "validate every response against openapi.json")
	fs.BoolVar(&s.Evolve, "evolve", false, "rehearse the service's next additive release: every answer gains unknown fields, enum values and headers, keys reordered (seeded; the journal names what was added)")
	fs.StringVar(&s.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.LogLevel, "log-level", "info", "log level: debug, info (a line per request), warn or error")
	fs.BoolVar(&s.FetchImages, "fetch-images", false, "fetch https image URLs for real (default: a deterministic placeholder, no network)")
	fs.StringVar(&s.ControlToken, "control-token", "", "protect the control API with this bearer token")
	fs.StringVar(&s.AllowedHosts, "allowed-hosts", "", "comma-separated host names, besides loopback ones and the public URL's, that may reach the control API and appear in file URLs (* for any)")
	fs.StringVar(&s.FileSecret, "file-secret", "", "key file addresses and the signatures of expiring ones with this secret (HMAC), so they cannot be computed from the seed")
	fs.BoolVar(&s.TLS, "tls", false, "serve https with a certificate made on first start and kept beside the state file (a local CA to trust, printed at start and served at "+mediamock.CAPath+")")
	fs.StringVar(&s.TLSCert, "tls-cert", "", "serve https with this PEM certificate (with its chain) instead; needs --tls-key")
	fs.StringVar(&s.TLSKey, "tls-key", "", "the PEM key of --tls-cert")
	fs.DurationVar(&s.ReadTimeout, "read-timeout", 60*time.Second, "longest time to read a whole request, body included")
	fs.DurationVar(&s.WriteTimeout, "write-timeout", 90*time.Second, "longest time to write a whole response (above the longest wait_seconds, 55 s)")
	fs.DurationVar(&s.IdleTimeout, "idle-timeout", 60*time.Second, "close keep-alive connections idle this long")
	fs.IntVar(&s.JournalSize, "journal-size", 500, "requests the journal keeps (0 turns it off)")
	fs.IntVar(&s.JournalBody, "journal-body-bytes", 4096, "bytes of each body the journal keeps")
	fs.IntVar(&s.MaxSandboxes, "max-sandboxes", 1000, "how many sandboxes may exist at once (one more is refused with 409)")
	fs.IntVar(&s.MCPMaxWait, "mcp-max-wait", 0, "cap the wait_seconds of MCP tool calls (and the timeout of the control MCP server's wait_journal) at this many seconds, 1 to 55 (0: no cap); many MCP clients give up on a call after 60 s")
	fs.Uint64Var(&s.OAuthApprove, "oauth-approve", 0, "approve every OAuth authorization request at once for this workspace id, without the consent page (for OAuth clients in tests)")
	fs.Var(&s.Snapshots, "snapshot", "put a snapshot pack (a file of GET /_mock/snapshot) on the server's shelf of named snapshots at start, checked first: NAME=FILE, or FILE named after its file name; repeat it for several (restore one with POST /_mock/snapshots/NAME/restore)")
	fs.BoolVar(&s.Coverage, "coverage-report", false, "print the coverage table to stderr at shutdown")
	fs.DurationVar(&s.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "how long requests in flight may take at shutdown")
	if !mcp {
		fs.BoolVar(&s.ExitWithParent, "exit-with-parent", false, "stop when standard input ends: the process that started the server holds it open, and the system closes it when that process dies, even by SIGKILL (the npm and pip helpers use it)")
	}
	fs.Usage = func() { serveUsage(fs, mcp) }
	return s, fs
}

// serveUsage prints the command's subcommands and flags, each with its
// variable.
func serveUsage(fs *flag.FlagSet, mcp bool) {
	w := fs.Output()
	if mcp {
		fmt.Fprintf(w, "Usage: mockserver mcp --api-key KEY [flags]\n       mockserver mcp --control [--control-token T] [flags]\n\n%s\n\nFlags (each also an environment variable):\n", mcpAbout)
	} else {
		usageCommands(w)
		fmt.Fprintf(w, "\n%s\n\nFlags (each also an environment variable; a flag wins over its variable):\n", serveAbout)
	}
	printFlags(w, fs, EnvName, 20)
}

// KeysFlags makes the keys command's flag set: --fixtures defaults to
// the server's MOCKSERVER_FIXTURES.
func KeysFlags(getenv func(string) string) (fixtures *string, seed *uint64, fs *flag.FlagSet) {
	fs = flag.NewFlagSet("mockserver keys", flag.ContinueOnError)
	fixtures = fs.String("fixtures", getenv(EnvName("fixtures")), "fixture file (default: the embedded default)")
	seed = fs.Uint64("seed", 0, "seed of the fixtures' fake data")
	return fixtures, seed, fs
}
