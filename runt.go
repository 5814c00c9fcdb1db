package mediamock

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/mediamock/mediamock/internal/tblog"
)

// TB is the part of testing.TB that RunT uses; *testing.T and *testing.B
// satisfy it. It keeps the testing package out of binaries that import
// this one.
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// RunT starts a server for a test: on a random loopback port, with its
// state file in t.TempDir(), in strict mode (a response that breaks
// openapi.json becomes a 500 that says why), with its warnings and errors
// logged to t.Log, stopped when the test ends. It fails the test if the
// server cannot start. Options may adjust the defaults.
func RunT(t TB, opts ...Option) *Server {
	t.Helper()
	o := Options{DBPath: filepath.Join(t.TempDir(), "state.db"), Strict: true,
		Logger: slog.New(tblog.New(t, slog.LevelWarn))}
	for _, f := range opts {
		f(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("mediamock: cannot start the server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("mediamock: close: %v", err)
		}
	})
	return s
}

// Option adjusts the Options of RunT; any func(*Options) is one.
type Option func(*Options)

// WithTLS serves https with a certificate of the server's making (see
// Options.TLS); Client trusts it, like httptest.NewTLSServer's.
func WithTLS() Option { return func(o *Options) { o.TLS = true } }

// WithSeed sets the seed of every random choice.
func WithSeed(seed uint64) Option { return func(o *Options) { o.Seed = seed } }

// WithFixtures loads the world from a fixture file instead of the embedded default.
func WithFixtures(path string) Option { return func(o *Options) { o.FixturesPath = path } }

// WithClock sets the clock mode (ClockVirtual by default).
func WithClock(mode ClockMode) Option { return func(o *Options) { o.Clock = mode } }

// WithStartTime sets where a new simulation's clock starts.
func WithStartTime(t time.Time) Option { return func(o *Options) { o.StartTime = t } }

// WithSpeed divides every simulated duration (jobs, publishing).
func WithSpeed(speed float64) Option { return func(o *Options) { o.Speed = speed } }

// WithControlToken protects the control API with a bearer token.
func WithControlToken(token string) Option { return func(o *Options) { o.ControlToken = token } }

// WithEvolve rehearses the service's next additive release on every
// answer (Options.Evolve).
func WithEvolve() Option { return func(o *Options) { o.Evolve = true } }

// WithLogger sends the server's log lines to l instead of t.Log.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }
