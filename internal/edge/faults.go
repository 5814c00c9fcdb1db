package edge

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/metrics"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// faultClass is the path class of a request that passed a faultable door:
// the MCP endpoint, a file, or an operation of the API.
func faultClass(r *http.Request) string {
	switch {
	case HasPathPrefix(r.URL.Path, "/mcp"):
		return fault.MCP
	case strings.HasPrefix(r.URL.Path, wire.FilesPath):
		return fault.Files
	}
	return fault.API
}

// faultState is what the edge knows of the faults of one request.
type faultState struct {
	class string
	// header is the request's own fault (Mock-Fault), nil when none.
	header *fault.Hit
	// prefer is the answer the request's Prefer header asks for (Prism's
	// convention), nil when none: a fault of the admit stage.
	prefer *fault.Hit
	// modality is set once it is known (a file's media type, a
	// generation's modality).
	modality string
	// op is the operation an MCP tool call the request carries is of, set
	// when the call is admitted (before any head goes): the answer's
	// faults target it too.
	op string
	// decided: the answer's faults (latency, delivery) were drawn.
	decided bool
	// deliver is the delivery fault the answer meets; its bytes are held
	// until the handler is done, then sent broken.
	deliver *fault.Hit
	held    bytes.Buffer
	// mu guards what an MCP tool call, on a goroutine of its own, may
	// set while the request is answered: met and modality.
	mu sync.Mutex
	// met are the faults the request met, for the journal and the coverage.
	met []*fault.Hit
	// abort breaks the connection once the handler is done (a fault
	// decided by the front: an MCP stream dropped without resumption).
	abort atomic.Bool
	// holding: the answer met a fault when its head was written, so it is
	// held until the journal has it (finishFaults sends it).
	holding bool
	// evolve is the evolve hit the answer meets, nil when none; evolved
	// names what it added, for the journal.
	evolve  *fault.Hit
	evolved []string
	// off: the request meets no fault, neither its header's nor a
	// rule's (it is refused for what it touches: NoFaults).
	off bool
}

// held reports whether the answer is kept back: it met a fault before its
// head went out, or a delivery fault or an abort will break it.
func (w *Writer) held() bool {
	return w.faults.holding || w.faults.deliver != nil || w.faults.evolve != nil || w.faults.abort.Load()
}

// readFaultHeader reads the Mock-Fault header of a request to a faultable
// door. A server whose test controls are closed (a control token is set)
// ignores it, with a log line: strangers must not steer it. A malformed
// header, or one of a kind the request's class cannot meet, is the
// request's error.
func (env *Env) readFaultHeader(w *Writer, r *http.Request) error {
	values := r.Header.Values(fault.Header)
	if len(values) > 0 {
		if env.ControlToken != "" {
			env.Log.Warn("Mock-Fault header ignored: the server's test controls are closed by its control token",
				"request_id", w.Header().Get("X-Request-Id"), "path", r.URL.Path, "value", truncate(values[0], 200))
			return nil
		}
		spec, err := fault.ParseHeader(values, env.API)
		if err != nil {
			return err
		}
		if err := fault.Fits(spec.Kind, w.faults.class); err != nil {
			return err
		}
		w.faults.header = fault.FromHeader(spec, env.Eng.Seed(), w.Header().Get("X-Request-Id"))
	}
	return env.readPrefer(w, r)
}

// readPrefer reads Prism's Prefer header (and its query parameters,
// __code=404) where the Mock-Fault header is read (a server whose test
// controls are open), for the service's operations: code=404 and
// example=NAME are a status fault of the request
// (fault.ParsePrefer), met at its admission; dynamic=... alone asks for
// nothing (the simulation answers). A Mock-Fault header of the same stage
// and a Prefer that asks for an answer contradict each other.
func (env *Env) readPrefer(w *Writer, r *http.Request) error {
	if env.ControlToken != "" || w.faults.class != fault.API {
		return nil
	}
	values := r.Header.Values(fault.PreferHeader)
	if strings.Contains(r.URL.RawQuery, "__") { // Prism's query parameters: __code=404
		if q := fault.PreferQuery(r.URL.Query()); q != "" {
			values = append([]string{q}, values...) // the query's first, as Prism reads them
		}
	}
	if len(values) == 0 {
		return nil
	}
	spec, ok, err := fault.ParsePrefer(values, env.API)
	if err != nil || !ok {
		return err
	}
	if h := w.faults.header; h != nil && h.Stage() == fault.Admit {
		return sim.InvalidError([]sim.Violation{{In: "header", Field: fault.PreferHeader,
			Reason: "asks for an answer, and so does the Mock-Fault header: give one of them"}})
	}
	w.faults.prefer = fault.FromPrefer(spec)
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Abort breaks the connection once the handler is done, without a
// complete answer: a fault the front decided (one of the call stage that
// drops a stream, where no stream can be closed for it).
func (w *Writer) Abort() { w.faults.abort.Store(true) }

// met records a fault the request met, for the journal and the coverage.
func (w *Writer) met(h *fault.Hit) {
	if h != nil {
		w.faults.mu.Lock()
		w.faults.met = append(w.faults.met, h)
		w.faults.mu.Unlock()
	}
}

// faultWorkspace is the workspace whose faults a request meets: its
// principal's, else its file's.
func (w *Writer) faultWorkspace() uint64 {
	if p := w.out.Principal; p != nil {
		return p.WorkspaceID
	}
	if f := w.out.File; f != nil {
		return f.WS
	}
	return 0
}

// Faultable reports whether the request may meet a fault: its door lets
// faults in, and it asks for one or a rule is set somewhere.
func (w *Writer) Faultable() bool {
	return w.faults.class != "" && !w.faults.off && (w.faults.header != nil || w.faults.prefer != nil || w.env.Rules.Active())
}

// NoFaults takes the request out of every fault, its Mock-Fault header's
// and the rules': a front calls it when the request is not authorized for
// what it touches (another workspace's MCP session), so that it is refused
// exactly as without them.
func (w *Writer) NoFaults() {
	w.faults.off = true
	w.faults.header, w.faults.prefer = nil, nil
}

// Admission is the admit stage of a request (an operation's call, or a
// file's download): a fault whose kind forces the answer (Hit.Admit), or
// nil.
func (w *Writer) Admission(req fault.Request) *fault.Hit { return w.pick(fault.Admit, req) }

// SessionFault is the session stage of an MCP request, as it arrives
// (session: the request names one): a fault the MCP front applies
// (Hit.Session), or nil.
func (w *Writer) SessionFault(session bool) *fault.Hit {
	return w.pick(fault.Session, fault.Request{Session: session})
}

// CallFault is the call stage of an MCP tool call of op by workspace ws:
// a fault the MCP front applies to the call (Hit.Call), or nil.
func (w *Writer) CallFault(op string, ws uint64) *fault.Hit {
	return w.pick(fault.Call, fault.Request{Operation: op, Workspace: ws})
}

// pick decides whether the request meets a fault at point p: its own
// Mock-Fault header when that asks for one there (a one-request rule), else
// the rules of its workspace and the global ones. The hit is recorded as
// met.
func (w *Writer) pick(p fault.Stage, req fault.Request) *fault.Hit {
	if w.faults.class == "" || w.faults.off {
		return nil
	}
	req.Class = w.faults.class
	w.faults.mu.Lock()
	if req.Modality == "" {
		req.Modality = w.faults.modality
	} else if w.faults.modality == "" {
		w.faults.modality = req.Modality // the answer's faults target it too
	}
	if req.Operation != "" && w.faults.op == "" {
		w.faults.op = req.Operation // so does its operation
	}
	w.faults.mu.Unlock()
	ws := req.Workspace
	if ws == 0 {
		ws = w.faultWorkspace()
	}
	var h *fault.Hit
	if hd := w.faults.header; hd != nil && hd.Stage() == p {
		if hd.Strikes(req) {
			h = hd
		}
	} else if pf := w.faults.prefer; pf != nil && pf.Stage() == p {
		h = pf
	} else {
		h = w.env.Rules.Pick(ws, p, req)
	}
	w.met(h)
	return h
}

// Delay waits the latency a hit of the delay stage draws (nil: none),
// until ctx ends or the server begins to stop, and returns it: every
// injected latency is applied here.
func (env *Env) Delay(ctx context.Context, h *fault.Hit) time.Duration {
	if h == nil {
		return 0
	}
	d := h.Delay()
	ctx, cancel := env.UntilStop(ctx)
	env.Sleep(ctx, d)
	cancel()
	return d
}

// decideFaults draws the answer's latency and delivery faults, once, when
// the answer is about to go.
func (w *Writer) decideFaults() {
	st := &w.faults
	if st.decided || st.class == "" || st.off || (st.header == nil && !w.env.Rules.Active() && !w.env.Evolve) {
		return
	}
	st.decided = true
	req := fault.Request{Operation: w.out.Operation, Path: w.req.URL.Path, Ranged: w.req.Header.Get("Range") != ""}
	st.mu.Lock()
	if req.Operation == "" {
		req.Operation = st.op // an MCP tool call's
	}
	st.mu.Unlock()
	w.latency += w.env.Delay(w.req.Context(), w.pick(fault.Delay, req))
	// A GET of the MCP endpoint is a stream that may never end: it is never held.
	if st.class == fault.MCP && w.req.Method == http.MethodGet {
		return
	}
	// Only the answers of the service's operations evolve (not the
	// document, not a path that is none).
	if st.class == fault.API && w.out.Operation != "" {
		st.evolve = w.pick(fault.Shape, req)
		if st.evolve == nil && w.env.Evolve {
			st.evolve = fault.Standing(w.env.Eng.Seed(), w.Header().Get("X-Request-Id"))
			w.met(st.evolve)
		}
	}
	st.deliver = w.pick(fault.Deliver, req)
	st.mu.Lock()
	st.holding = len(st.met) > 0
	st.mu.Unlock()
}

// countHeaderFaults counts the faults a Mock-Fault header injected in m,
// and reports whether a status fault (of a rule or a header) forced the
// answer's status.
func (st *faultState) countHeaderFaults(m *metrics.Metrics) (forced bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, h := range st.met {
		if h.Rule == fault.HeaderRule || h.Rule == fault.PreferRule {
			m.HeaderFault(h.Kind)
		}
		forced = forced || h.Stage() == fault.Admit
	}
	return forced
}

// journal names the faults met, and their rules, for the journal entry.
func (st *faultState) journal() (kinds, rules string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.met) == 0 {
		return "", ""
	}
	k, r := make([]string, len(st.met)), make([]string, len(st.met))
	for i, h := range st.met {
		k[i], r[i] = h.Kind, h.Rule
	}
	return strings.Join(k, ","), strings.Join(r, ",")
}

// exchange is what the coverage of failure paths reads of the request.
func (w *Writer) exchange() journal.Exchange {
	r := w.req
	x := journal.Exchange{Workspace: w.faultWorkspace(), Method: r.Method, Path: r.URL.Path, Operation: w.out.Operation, MCPMethod: w.out.MCPMethod,
		Ranged: r.Header.Get("Range") != "", Resuming: r.Header.Get("Last-Event-ID") != ""}
	if c := w.out.Call; c != nil {
		x.Operation = c.Operation
	}
	x.Background = w.faults.class == fault.MCP && r.Method == http.MethodGet && !x.Resuming
	return x
}
