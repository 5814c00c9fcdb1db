package mediamock

import (
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

// Options configures a Server. The zero value works: an in-process server
// on a random loopback port, seeded from the embedded default fixture with
// seed 0, on a virtual clock, with its state in a temporary file.
type Options struct {
	// Addr is the listen address; "" picks a free loopback port.
	Addr string
	// NoListener serves only through Handler and Client, in memory.
	NoListener bool
	// TLS serves https with a certificate of the server's making: a local
	// certificate authority, made once, and a leaf for the loopback names,
	// the listen host, the public URL's host and the allowed hosts, kept in
	// the folder <DBPath>.tls (made again when a host is missing from it).
	// The file addresses become https; Client trusts the authority, which
	// CAFile names and CAPath serves.
	TLS bool
	// TLSCert and TLSKey are PEM files of a certificate (with its chain)
	// and its key to serve https with instead; setting them implies TLS.
	TLSCert, TLSKey string
	// DBPath is the bbolt state file; "" uses a temporary file removed on Close.
	DBPath string
	// Durable makes every commit reach the disk (fsync) before it is acknowledged.
	Durable bool
	// Reset wipes the state file and seeds it again from the fixtures.
	Reset bool
	// Seed drives every random choice: same seed, same requests, same bytes.
	Seed uint64
	// Clock is the clock mode: sim.ClockVirtual (default), sim.ClockManual or sim.ClockReal.
	Clock sim.ClockMode
	// StartTime is where a new simulation's clock starts; zero means
	// sim.DefaultEpoch, or the wall time in real mode.
	StartTime time.Time
	// Speed divides every simulated duration (jobs, publishing); 0 means 1.
	Speed float64
	// FixturesPath is a fixture file; "" uses the embedded default.
	FixturesPath string
	// World is an already loaded fixture; it takes precedence over FixturesPath.
	World *fixtures.World
	// PublicURL is the base of the addresses the server hands out (file
	// URLs); "" uses the scheme and host the client reached the server
	// with when that host is loopback or allowed, else the listen address.
	PublicURL string
	// AllowedHosts are host names (besides loopback ones and the public
	// URL's host) that may reach the control API and appear in addresses;
	// "*" allows any.
	AllowedHosts []string
	// FileSecret, when set, keys file addresses and the signatures of
	// expiring ones (HMAC), so that they cannot be computed from the seed
	// (a server shared beyond one machine).
	FileSecret string
	// ReadTimeout bounds reading a whole request, body included; 0 means
	// 60 seconds. WriteTimeout bounds a whole response; 0 means 90 seconds,
	// above the longest wait_seconds (55). IdleTimeout closes idle
	// keep-alive connections; 0 means 60 seconds.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxBodyBytes caps request bodies; 0 means 16 MiB.
	MaxBodyBytes int64
	// Strict validates every response against openapi.json and replaces a
	// non-conforming one with a 500 that says why.
	Strict bool
	// Evolve rehearses the service's next additive release on every
	// answer of its operations: unknown fields, unknown values of status,
	// kind, modality and the error code, undeclared headers, keys in
	// another order; seeded, and named in the journal's Evolved. A fault
	// rule or Mock-Fault header of kind evolve does it for some requests
	// alone, or with some parts off.
	Evolve bool
	// SnapshotPacks are snapshot files (GET /_mock/snapshot's) put on the
	// server's shelf of named snapshots at start, each checked as a
	// restore checks one: "NAME=FILE", or "FILE", named after the file
	// (its name without the extension). Restore one by name
	// (RestoreSnapshot, POST /_mock/snapshots/{name}/restore).
	SnapshotPacks []string
	// Logger receives the server's log lines; nil discards them.
	Logger *slog.Logger
	// WallClock reads wall time for the real clock mode; nil is time.Now.
	WallClock func() time.Time
	// ControlToken, when set, protects the control API (but its health
	// check): Authorization: Bearer <ControlToken>.
	ControlToken string
	// JournalSize is how many recent requests the journal keeps; 0 means
	// 500, a negative value turns the journal off.
	JournalSize int
	// JournalBodyBytes caps each recorded body; 0 means 4096.
	JournalBodyBytes int
	// MaxSandboxes caps how many sandboxes exist at once; 0 means 1000.
	MaxSandboxes int
	// MaxMCPSessions caps the MCP sessions (of the handshake-era revisions)
	// open at once on the server, 0 means 4096; MaxMCPWorkspaceSessions
	// caps those of one workspace, 0 means 256. When the server's cap is
	// reached, a workspace under its own cap still opens a session: the
	// least recently used session of the workspace holding the most ends.
	MaxMCPSessions, MaxMCPWorkspaceSessions int
	// MCPMaxWait, when positive, caps the wait_seconds of MCP tool calls
	// (whole seconds, at most 55): many MCP clients give up on a call
	// after 60 s, and a 55 s wait plus latency can cross that; the call
	// then answers with the job still running. 0: the API's 55. It caps
	// (and sets, when none is given) the timeout of the control MCP
	// server's wait_journal too.
	MCPMaxWait int
	// OAuthApprove, when not zero, makes the authorization server approve
	// every authorization request at once for that workspace, without its
	// consent page: for tests that run an OAuth client without a browser.
	OAuthApprove uint64
	// CoverageReport, when set, receives the coverage table at shutdown.
	CoverageReport io.Writer
	// FetchImages fetches https image URLs (uploads, references, Encore
	// photos) for real, with a timeout, a size cap, bounded redirects and
	// private addresses refused. Off, every https URL resolves to a
	// deterministic placeholder photo and the server never leaves the host.
	FetchImages bool
	// Stop, when closed while New loads the fixtures or seeds the state
	// file, makes New give up at once (at the seed's next commit, tens of
	// milliseconds): it returns an error wrapping ErrStopped, and a seed
	// cut short leaves its marker in the file, so the next start seeds
	// again. The command passes its signal context's Done.
	Stop <-chan struct{}
}

// ErrStopped is wrapped by New's error when Options.Stop closed before
// the state was complete.
var ErrStopped = sim.ErrStopped

// SandboxJournalSize is how many recent requests a sandbox's own journal
// keeps (fewer when the server's journal is smaller).
const SandboxJournalSize = 100

// DefaultMaxBodyBytes is the default cap of request bodies.
const DefaultMaxBodyBytes = 16 << 20

func loadWorld(o Options) (*fixtures.World, error) {
	if o.World != nil {
		return o.World, nil
	}
	return fixtures.LoadUntil(o.FixturesPath, o.Seed, o.Stop)
}

// memoryHost is the host of a server without a listener.
const memoryHost = "mediamock.test"

// allowedHosts are the hosts besides loopback ones that may reach the
// control API: the option's, the public URL's, the in-memory one.
func allowedHosts(o Options) []string {
	out := []string{memoryHost}
	for _, h := range o.AllowedHosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	if u, err := url.Parse(o.PublicURL); err == nil && u.Hostname() != "" {
		out = append(out, strings.ToLower(u.Hostname()))
	}
	return out
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
