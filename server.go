// Package mediamock is a stateful simulator of the media generation
// service's REST API v1, for contract tests and local development.
//
// In a Go test, start one server per test and move its clock:
//
//	srv := mediamock.RunT(t, mediamock.WithSeed(7))
//	req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations",
//		strings.NewReader(`{"modality":"video","model_id":"veo-3-fast","prompt":"a fox"}`))
//	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
//	req.Header.Set("Content-Type", "application/json")
//	resp, err := srv.Client().Do(req)
//	...
//	srv.RunUntilIdle(time.Hour) // every job ends, in order, on the simulated clock
//
// Every request is validated against openapi.json, authenticated with the
// fixture's API keys, rate-limited per workspace and served by the
// simulation engine (package sim), whose state lives in one bbolt file.
//
// The same service is also an MCP server, at MCPURL() (Streamable HTTP) or
// over stdio (ServeMCP): one tool per operation, sharing the rate limit,
// the journal, the coverage and the clock with the REST API.
package mediamock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/fetch"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/metrics"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/parking"
	"github.com/mediamock/mediamock/internal/router"
	"github.com/mediamock/mediamock/internal/store"
	"github.com/mediamock/mediamock/internal/tlsca"
	"github.com/mediamock/mediamock/sim"
)

// Server is a running simulator. Its Controls are the server's: faults
// that apply to every workspace, and the journal and coverage of every
// request.
type Server struct {
	Controls
	opts   Options
	eng    *sim.Engine
	env    *edge.Env
	plane  *controlplane.Plane
	fronts *router.Fronts
	log    *slog.Logger

	httpSrv *http.Server
	ln      net.Listener
	url     string
	tmpDir  string

	transport     *http.Transport // of Client, when listening
	tls           *tlsca.Setting  // nil for plain http
	transportOnce sync.Once

	stop    context.Context // ends when shutdown begins: long polls answer at once
	stopNow context.CancelFunc
	driver  sync.WaitGroup
	closeMu sync.Mutex
	closed  bool
}

// New starts a server.
func New(o Options) (*Server, error) {
	// The first server of a process parses the two OpenAPI documents (the
	// largest part of its start): in the background, while it loads the
	// fixtures and opens its state.
	Preload()
	world, err := loadWorld(o)
	if err != nil {
		return nil, err
	}
	if o.Clock == "" {
		o.Clock = sim.ClockVirtual
	}
	if _, err := sim.ParseClockMode(string(o.Clock)); err != nil {
		return nil, err
	}
	if o.WallClock == nil {
		o.WallClock = time.Now
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.PublicURL != "" {
		o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	start := o.StartTime
	resetStart := start // a reset of a real clock given no start goes back to the wall clock
	if start.IsZero() {
		start = sim.DefaultEpoch
		if o.Clock == sim.ClockReal {
			start = o.WallClock()
		} else {
			resetStart = start
		}
	}
	if o.JournalSize == 0 {
		o.JournalSize = 500
	}
	if o.JournalBodyBytes <= 0 {
		o.JournalBodyBytes = 4096
	}
	s := &Server{opts: o, log: log}
	s.stop, s.stopNow = context.WithCancel(context.Background())
	var images sim.ImageResolver = sim.OfflineImages{Seed: o.Seed}
	if o.FetchImages {
		images = fetch.New()
	}
	useTLS := o.TLS || o.TLSCert != "" || o.TLSKey != ""
	if o.NoListener && useTLS {
		return nil, errors.New("TLS needs a listener (NoListener is set)")
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	// The port first: a busy one stops the start before a state file or
	// a temporary folder is made.
	if !o.NoListener {
		if s.ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("listen on %s: %w (another server may be using the port; --addr 127.0.0.1:0 picks a free one)", addr, err)
		}
	}
	path := o.DBPath
	if path == "" {
		if s.tmpDir, err = os.MkdirTemp("", "mediamock-"); err != nil {
			s.closeListener()
			return nil, err
		}
		path = filepath.Join(s.tmpDir, "state.db")
	}
	rules := fault.NewSet(o.Seed) // every fault, the engine's fates included
	s.eng, err = sim.Open(sim.Config{
		Path: path, Durable: o.Durable, Reset: o.Reset, Seed: o.Seed, World: world,
		Clock: sim.NewClock(o.Clock, start, o.WallClock), Speed: o.Speed,
		Images: images, Log: log, FileSecret: o.FileSecret, Stop: o.Stop, Fates: rules,
	})
	if err != nil {
		s.closeListener()
		s.removeTemp()
		return nil, err
	}
	api, err := loadService()
	if err == nil {
		err = ops.Check(api)
	}
	if err == nil {
		err = control.Check(ControlDocument)
	}
	if err != nil {
		s.closeListener()
		s.eng.Close()
		s.removeTemp()
		return nil, err
	}
	s.env = &edge.Env{Eng: s.eng, Gate: gate.New(s.eng), Rules: rules, API: api,
		Journal: journal.New(o.JournalSize, o.JournalBodyBytes), Coverage: &journal.Counts{FaultKinds: fault.RequestKinds()}, Log: log,
		WallClock: o.WallClock, Stop: s.stop, Sleep: sleep, PublicURL: o.PublicURL, MaxBodyBytes: o.MaxBodyBytes,
		Strict: o.Strict, Evolve: o.Evolve, ControlToken: o.ControlToken, AllowedHosts: allowedHosts(o),
		MaxMCPSessions: o.MaxMCPSessions, MaxMCPWorkspaceSessions: o.MaxMCPWorkspaceSessions, MCPMaxWait: o.MCPMaxWait,
		Journals: journal.NewRings(min(o.JournalSize, SandboxJournalSize), o.JournalBodyBytes)}
	// The control plane keeps the same journals, coverage and fault store
	// the edge records into.
	s.plane = &controlplane.Plane{Eng: s.eng, Rules: rules, Service: api, Document: loadControl, Journal: s.env.Journal,
		Journals: s.env.Journals, Coverage: s.env.Coverage, Operations: operations(api), Start: resetStart, WallClock: o.WallClock,
		MaxSandboxes: o.MaxSandboxes, ControlToken: o.ControlToken, Stop: s.stop}
	s.plane.FollowReports()
	s.env.Metrics = metrics.New(metricOperations(api), metrics.Sources{
		Engine: s.eng, Faults: rules, JournalWaits: s.env.Journal.Waiting, FaultKinds: fault.Kinds(), HeaderKinds: fault.RequestKinds(),
		MCPSessions: func() int { return s.fronts.MCPSessions() }})
	if err := s.plane.AdoptLegacyFaults(); err != nil { // an older state file's
		s.closeListener()
		s.eng.Close()
		s.removeTemp()
		return nil, err
	}
	if s.plane.Shelf, err = store.OpenShelf(path); err == nil {
		err = loadPacks(s.plane, o.SnapshotPacks)
	}
	if err != nil {
		s.closeListener()
		s.eng.Close()
		s.removeTemp()
		return nil, err
	}
	s.eng.SetOwnFiles(s.env.OwnFile)
	s.Controls = Controls{plane: s.plane, url: s.URL}
	s.fronts = router.New(s.env, router.Config{Service: OpenAPIDocument, Control: ControlDocument, LoadControl: loadControl,
		Plane: s.plane, CAPath: CAPath, OAuthApprove: o.OAuthApprove})
	s.driver.Add(1)
	go func() {
		defer s.driver.Done()
		s.eng.Drive(s.stop)
	}()
	if o.NoListener {
		s.url = "http://" + memoryHost
		s.env.ListenURL = s.url
		return s, nil
	}
	scheme := "http"
	if useTLS {
		if s.tls, err = tlsca.Setup(o.TLSCert, o.TLSKey, path+".tls", tlsca.Hosts(addr, o.PublicURL, o.AllowedHosts)); err != nil {
			s.Close()
			return nil, err
		}
		s.fronts.CA = s.tls.CAPEM
		scheme = "https"
	}
	s.url = scheme + "://" + s.ln.Addr().String()
	s.env.ListenURL = s.url
	if ap, err := netip.ParseAddrPort(s.ln.Addr().String()); err == nil && !ap.Addr().IsLoopback() {
		s.env.Exposed, s.plane.Exposed = true, true
		if ap.Addr().IsUnspecified() {
			s.url = fmt.Sprintf("%s://localhost:%d", scheme, ap.Port())
			s.env.ListenURL = s.url
		}
		if o.ControlToken == "" {
			log.Warn("the server listens beyond loopback without a control token: anyone who reaches it can drive the control API; snapshots stay refused and tokens hidden from the control API's reads until --control-token is set", "addr", s.ln.Addr().String())
		}
	}
	s.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: orDefault(o.ReadTimeout, 60*time.Second), WriteTimeout: orDefault(o.WriteTimeout, 90*time.Second),
		IdleTimeout: orDefault(o.IdleTimeout, 60*time.Second), ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	ln := s.ln
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls.Config)
	} else {
		// Waiting long polls give their connections up and wait without
		// net/http's goroutines and buffers (package parking).
		s.env.Parking = parking.New(ln, s.httpSrv)
		ln = s.env.Parking
		// At the stop, the parked polls answer with what they have.
		context.AfterFunc(s.stop, s.env.Parking.WakeAll)
	}
	go s.httpSrv.Serve(ln) // returns ErrServerClosed at Shutdown
	return s, nil
}

// URL is the server's root address, like http://127.0.0.1:41234. The REST
// base address is URL() + "/api/v1".
func (s *Server) URL() string { return s.url }

// BaseURL is the REST base address, URL() + "/api/v1".
func (s *Server) BaseURL() string { return s.url + BasePath }

// Handler is the server's HTTP handler, for use without a listener.
func (s *Server) Handler() http.Handler { return s }

// Client returns an HTTP client that reaches the server (in memory when the
// server has no listener). Its connections close with the server.
func (s *Server) Client() *http.Client {
	if s.ln == nil {
		return &http.Client{Transport: edge.MemoryTransport{Handler: s}}
	}
	s.transportOnce.Do(func() {
		s.transport = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
		if s.tls != nil {
			s.transport.TLSClientConfig = &tls.Config{RootCAs: s.tls.Roots, MinVersion: tls.VersionTLS12}
		}
	})
	return &http.Client{Transport: s.transport}
}

// Shutdown stops the server gracefully: it stops accepting, answers open
// long polls with the current state, waits for requests in flight (until ctx
// ends), and closes the state file.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	s.stopNow()
	// The client's idle connections go first: a connection it dialled but
	// never used would hold the listener's shutdown for five seconds.
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	var err error
	if s.httpSrv != nil {
		err = s.httpSrv.Shutdown(ctx)
		if p := s.env.Parking; p != nil {
			// The parked long polls answer with the state as it is.
			if perr := p.Wait(ctx); err == nil {
				err = perr
			}
		}
	} else {
		s.closeListener() // a start that failed after taking the port
	}
	s.driver.Wait()
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	if s.opts.CoverageReport != nil {
		s.plane.CoverageReport(0).WriteTable(s.opts.CoverageReport)
	}
	if cerr := s.eng.Close(); err == nil {
		err = cerr
	}
	s.removeTemp()
	return err
}

// Close stops the server, giving requests in flight five seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.Shutdown(ctx)
}

// closeListener lets the port go when a start fails before serving.
func (s *Server) closeListener() {
	if s.ln != nil {
		s.ln.Close()
	}
}

func (s *Server) removeTemp() {
	if s.tmpDir != "" {
		os.RemoveAll(s.tmpDir)
	}
}

// operations lists the operations of openapi.json for the coverage report.
func operations(api *contract.Contract) []journal.Operation {
	var out []journal.Operation
	for _, op := range api.Operations() {
		if op.Scope == "" {
			continue // the document itself
		}
		out = append(out, journal.Operation{ID: op.ID, Method: op.Method, Path: BasePath + op.Path, Declared: api.Statuses(op.ID)})
	}
	return out
}

// metricOperations are the values the operation label of the metrics may
// take: the operationIds of openapi.json and of control.json.
func metricOperations(api *contract.Contract) []string {
	var out []string
	for _, op := range api.Operations() {
		out = append(out, op.ID)
	}
	ctl, _ := control.Routes(ControlDocument) // checked at start
	return append(out, ctl...)
}

// sleep waits d of wall time, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
