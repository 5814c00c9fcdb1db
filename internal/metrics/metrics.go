// Package metrics is a server's Prometheus metrics, served by the control
// API at GET /_mock/metrics. What a request changes is counted on its way
// out with atomic additions to counters made in advance (no lock, no
// allocation once a label set was seen); the rest is read from the engine
// and the fronts when a scrape asks (collectors), so that a scrape costs
// the requests nothing.
//
// Every label has a bounded set of values: fronts, operationIds of the two
// OpenAPI documents, statuses, modalities, job statuses, ledger entry
// types and fault kinds. Never an id, a path or a workspace: a request to
// an unknown path counts under the operation "other".
//
//	m := metrics.New(operations, metrics.Sources{Engine: eng, Faults: rules})
//	m.Requests.Count("rest", "listAssets", 200, false)
//	http.Handle("/metrics", m.Handler())
package metrics

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mediamock/mediamock/sim"
)

// Namespace prefixes every metric's name.
const Namespace = "mediamock"

// Fronts are the values of the front label, in the order they are listed:
// the fronts of the edge, and other for any other.
var Fronts = []string{"rest", "mcp", "control", "dashboard", "oauth", "other"}

// Operation label values besides the operationIds.
const (
	// OperationNone is a request that called no operation: an MCP protocol
	// message, a file download, an answer before routing.
	OperationNone = "none"
	// OperationOther is a request whose operation is not one of the
	// documents' (an unknown path answered 404 carries none, and counts
	// under OperationNone).
	OperationOther = "other"
)

// Causes of a 429 answer.
const (
	CauseRateLimit = "rate_limit" // the workspace's rate window
	CauseFault     = "fault"      // an injected fault forced it
)

// Engine is what the metrics read of the simulation at a scrape.
type Engine interface {
	Stats() (sim.Stats, error)
}

// FaultHits counts the strikes of the fault rules by kind.
type FaultHits interface {
	HitsByKind() map[string]uint64
}

// Sources are what a scrape reads besides the counters. A nil field is
// not read (its metrics are left out).
type Sources struct {
	Engine Engine
	Faults FaultHits
	// MCPSessions counts the MCP sessions open.
	MCPSessions func() int
	// JournalWaits counts the waits for a journal entry in progress.
	JournalWaits func() int
	// FaultKinds are the kinds of fault a rule may have, and HeaderKinds
	// those a Mock-Fault header may ask for: the values of the kind label.
	FaultKinds, HeaderKinds []string
}

// Metrics are a server's metrics: the request counters and the
// collectors of the state, on a registry of their own.
type Metrics struct {
	// Requests are the counters the edge adds to.
	Requests *Requests
	registry *prometheus.Registry
	handler  http.Handler
}

// New returns the metrics of a server whose operations (operationIds of
// both documents) are operations.
func New(operations []string, src Sources) *Metrics {
	m := &Metrics{Requests: newRequests(operations, src.HeaderKinds), registry: prometheus.NewRegistry()}
	m.registry.MustRegister(&requestCollector{r: m.Requests, faults: src.Faults, kinds: src.FaultKinds}, &stateCollector{src: src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// Count counts a request (Requests.Count); a nil *Metrics counts nothing.
func (m *Metrics) Count(front, op string, status int, faulted bool) {
	if m != nil {
		m.Requests.Count(front, op, status, faulted)
	}
}

// HeaderFault counts a fault a Mock-Fault header injected
// (Requests.HeaderFault); a nil *Metrics counts nothing.
func (m *Metrics) HeaderFault(kind string) {
	if m != nil {
		m.Requests.HeaderFault(kind)
	}
}

// Handler serves the metrics in the text exposition format; a nil
// *Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// Registry is the registry the metrics are on, to gather them in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// maxStatus bounds the status label: a status outside 100 to 599 counts
// as 0.
const maxStatus = 600

// statuses count the requests of one front and operation, by status.
type statuses [maxStatus]atomic.Uint64

// Requests counts requests by front, operation and status, the 429s by
// cause and the faults a Mock-Fault header injected, by kind. A nil
// *Requests counts nothing.
type Requests struct {
	ops     map[string]int // operationId -> index in names
	names   []string       // none, other, then the operationIds
	cells   []atomic.Pointer[statuses]
	limited []atomic.Uint64 // front × cause
	kinds   map[string]int  // fault kind -> index in header
	kindOf  []string
	header  []atomic.Uint64 // faults from headers, by kind (the last: other)
}

func newRequests(operations, kinds []string) *Requests {
	r := &Requests{ops: map[string]int{}, names: []string{OperationNone, OperationOther}, kinds: map[string]int{}}
	for _, op := range operations {
		if _, ok := r.ops[op]; !ok && op != "" && op != OperationNone && op != OperationOther {
			r.ops[op] = len(r.names)
			r.names = append(r.names, op)
		}
	}
	for _, k := range kinds {
		if _, ok := r.kinds[k]; !ok {
			r.kinds[k] = len(r.kindOf)
			r.kindOf = append(r.kindOf, k)
		}
	}
	r.kindOf = append(r.kindOf, "other")
	r.cells = make([]atomic.Pointer[statuses], len(Fronts)*len(r.names))
	r.limited = make([]atomic.Uint64, len(Fronts)*2)
	r.header = make([]atomic.Uint64, len(r.kindOf))
	return r
}

func frontIndex(front string) int {
	for i, f := range Fronts[:len(Fronts)-1] {
		if f == front {
			return i
		}
	}
	return len(Fronts) - 1
}

func (r *Requests) opIndex(op string) int {
	if op == "" {
		return 0
	}
	if i, ok := r.ops[op]; ok {
		return i
	}
	return 1
}

// Count counts a request of front that called operation op ("" for none)
// and was answered status; faulted says an injected status fault forced
// that status (a 429 it answered was not the rate window's).
func (r *Requests) Count(front, op string, status int, faulted bool) {
	if r == nil {
		return
	}
	fi := frontIndex(front)
	c := &r.cells[fi*len(r.names)+r.opIndex(op)]
	s := c.Load()
	if s == nil {
		s = new(statuses)
		if !c.CompareAndSwap(nil, s) {
			s = c.Load()
		}
	}
	if status < 100 || status >= maxStatus {
		status = 0
	}
	s[status].Add(1)
	if status == http.StatusTooManyRequests {
		cause := 0
		if faulted {
			cause = 1
		}
		r.limited[fi*2+cause].Add(1)
	}
}

// HeaderFault counts a fault of kind a Mock-Fault header injected.
func (r *Requests) HeaderFault(kind string) {
	if r == nil {
		return
	}
	i, ok := r.kinds[kind]
	if !ok {
		i = len(r.kindOf) - 1
	}
	r.header[i].Add(1)
}

// Info describes one metric, as the reference page lists it.
type Info struct {
	// Name is the metric's full name; Type is counter, gauge or histogram.
	Name, Type string
	Labels     []string
	Help       string
}

// infos are the metrics defined, in the order they are.
var infos []Info

// define describes a metric of the server.
func define(name, typ, help string, labels ...string) *prometheus.Desc {
	name = Namespace + "_" + name
	infos = append(infos, Info{Name: name, Type: typ, Labels: labels, Help: help})
	return prometheus.NewDesc(name, help, labels, nil)
}

// Reference lists every metric of a server (beside the Go runtime's and
// the process's), for its reference page.
func Reference() []Info { return slices.Clone(infos) }

var (
	requestsDesc = define("requests_total", "counter",
		"Requests answered, by front, operation (operationId; none, or other for one outside the documents) and status. For an MCP tool call, the status the operation answered.", "front", "operation", "status")
	limitedDesc = define("too_many_requests_total", "counter",
		"Requests answered 429, by front and cause: rate_limit (the workspace's rate window) or fault (forced by an injected fault).", "front", "cause")
	faultHitsDesc = define("fault_hits_total", "counter",
		"Injected faults that struck, by kind and by what injected them: a rule (of any scope) or a Mock-Fault header.", "kind", "via")
)

type requestCollector struct {
	r      *Requests
	faults FaultHits
	kinds  []string // of the rules
}

func (c *requestCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- requestsDesc
	ch <- limitedDesc
	ch <- faultHitsDesc
}

func (c *requestCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	for fi, front := range Fronts {
		for oi, op := range r.names {
			s := r.cells[fi*len(r.names)+oi].Load()
			if s == nil {
				continue
			}
			for status := range s {
				if n := s[status].Load(); n > 0 {
					ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(n), front, op, strconv.Itoa(status))
				}
			}
		}
		for cause, name := range []string{CauseRateLimit, CauseFault} {
			if n := r.limited[fi*2+cause].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(limitedDesc, prometheus.CounterValue, float64(n), front, name)
			}
		}
	}
	// Every kind is listed, at 0 too.
	if c.faults != nil {
		byRule := c.faults.HitsByKind()
		for _, kind := range c.kinds {
			ch <- prometheus.MustNewConstMetric(faultHitsDesc, prometheus.CounterValue, float64(byRule[kind]), kind, "rule")
		}
		var other uint64
		for kind, n := range byRule {
			if !slices.Contains(c.kinds, kind) {
				other += n
			}
		}
		if other > 0 {
			ch <- prometheus.MustNewConstMetric(faultHitsDesc, prometheus.CounterValue, float64(other), "other", "rule")
		}
	}
	for i, kind := range r.kindOf {
		if n := r.header[i].Load(); i < len(r.kindOf)-1 || n > 0 {
			ch <- prometheus.MustNewConstMetric(faultHitsDesc, prometheus.CounterValue, float64(n), kind, "header")
		}
	}
}
