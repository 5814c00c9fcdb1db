package fault

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mediamock/mediamock/internal/seed"
)

// Stage is where in a request's life (or a job's) a kind is decided. Each
// stage calls its kinds through one method, which the kind implements and
// the front or the edge hands a small interface to: a kind of the stage
// deliver implements Deliver and is handed a Delivery.
type Stage int

// The stages, in the order of a request's life, then the simulation's.
const (
	// Session: when an MCP request arrives (Session, handed an MCPRequest).
	Session Stage = iota
	// Admit: before the operation runs (Admit, handed an Admission).
	Admit
	// Access: when a file is asked for (Access, handed a FileRequest).
	Access
	// Call: when an MCP tool call has run (Call, handed an MCPCall).
	Call
	// Delay: when the answer is ready to go (Delay: a latency).
	Delay
	// Shape: when the answer is ready to go, before its delivery (Shape,
	// handed the Answer).
	Shape
	// Deliver: while the answer is sent (Deliver, handed a Delivery).
	Deliver
	// Fate: when a job is created, in the simulation (the engine asks
	// through sim.Fates: fates.go).
	Fate
	// Publish: when a publication delivers to a platform, in the
	// simulation (sim.Fates too).
	Publish
	stages // how many
)

// stageInfo names each stage in x-fault-kinds and says when it decides
// its kinds, for the reference page.
var stageInfo = [stages]struct{ name, doc string }{
	Session: {"session", "when an MCP request arrives, before it is handled"},
	Admit:   {"admit", "before the operation runs, after authentication, the rate window and the scope: nothing changes"},
	Access:  {"access", "when a file is asked for"},
	Call:    {"call", "when an MCP tool call has run, before its result is sent"},
	Delay:   {"delay", "when the answer is ready to go, before its head is sent"},
	Shape:   {"shape", "when the answer is ready to go, before its delivery"},
	Deliver: {"deliver", "while the answer is sent: the operation has run (a creation that met one was made, and charged)"},
	Fate:    {"fate", "when a job is created, in the simulation: the creation answers as ever (or is refused, with a 422), the job fails later"},
	Publish: {"publish", "when a publication delivers to a platform, in the simulation"},
}

// String is the stage's name, as x-fault-kinds spells it.
func (s Stage) String() string {
	if s < 0 || s >= stages {
		return "stage(" + strconv.Itoa(int(s)) + ")"
	}
	return stageInfo[s].name
}

// The method each stage of a request calls on a kind of it. A kind of the
// simulation's stages answers a question of sim.Fates instead (fates.go).
type (
	sessioner interface {
		// Session applies the kind to an MCP request as it arrives.
		Session(r MCPRequest)
	}
	admitter interface {
		// Admit is the answer the kind forces instead of the operation's.
		Admit(a Admission) error
	}
	accessor interface {
		// Access judges a file request: struck when the kind met it, and
		// the error to answer with (nil: the file is served).
		Access(f FileRequest) (struck bool, err error)
		// Expiry is when a file address handed out at now expires, and
		// whether the kind makes addresses expire at all.
		Expiry(now time.Time) (time.Time, bool)
	}
	caller interface {
		// Call applies the kind to an MCP tool call that has run.
		Call(c MCPCall)
	}
	delayer interface {
		// Delay draws the latency the answer waits.
		Delay(draws *seed.RNG) time.Duration
	}
	shaper interface {
		// Shape changes the held answer and names each change.
		Shape(a Answer, draws *seed.RNG) []string
	}
	deliverer interface {
		// Deliver sends the held answer, broken as the kind breaks it.
		Deliver(d Delivery, draws *seed.RNG)
	}
)

// implements reports whether k implements the method of stage s.
func implements(k Kind, s Stage) bool {
	return [stages]func(Kind) bool{
		Session: is[sessioner], Admit: is[admitter], Access: is[accessor], Call: is[caller],
		Delay: is[delayer], Shape: is[shaper], Deliver: is[deliverer],
		Fate:    func(k Kind) bool { return answersFates(k, Fate) },
		Publish: func(k Kind) bool { return answersFates(k, Publish) },
	}[s](k)
}

// is reports whether k implements the interface T.
func is[T any](k Kind) bool {
	_, ok := k.(T)
	return ok
}

// An MCPRequest is an MCP request as it arrives, for a kind of the
// session stage; the MCP front implements it.
type MCPRequest interface {
	// Header is the answer's header.
	Header() http.Header
	// Refuse answers the request with err at once: it goes no further.
	Refuse(err error)
	// EndSession ends the session the request carries: the server then
	// answers it, and every later request with its id, as for a session
	// it does not know.
	EndSession()
}

// An Admission forces the answer of a call the gate let in, for a kind of
// the admit stage: the operations' pipeline and the files' front
// implement it.
type Admission interface {
	// Answer is the error that answers the call as f says, instead of
	// its operation: the spec's error object for the status, or the body
	// f gives, with the headers the gate gives any answer of the call (the
	// rate window; a 429's Retry-After). What f asks is held to what the
	// call's operation declares (Forced.Check) unless f rehearses drift.
	Answer(f Forced) error
}

// Forced is an answer a kind forces instead of the operation's.
type Forced struct {
	// Status is the status; 0 with an Example: the operation's success.
	Status int
	// Code and Message are the error object's (""): the code the
	// document gives the status first, the server's message for it.
	Code, Message string
	// Example names an example of the document the answer's body is.
	Example string
	// Body is the answer's body, sent as it is; nil: the error object.
	Body []byte
	// Drift: the answer rehearses drift, outside what the document
	// declares; the journal and the client report mark it so.
	Drift bool
}

// ForceFunc is an Admission of a function.
type ForceFunc func(f Forced) error

// Answer calls fn.
func (fn ForceFunc) Answer(f Forced) error { return fn(f) }

// A FileRequest is a request for a file, as a kind of the access stage
// judges it; the edge implements it.
type FileRequest interface {
	// Now is the simulated clock's time.
	Now() time.Time
	// Made is when the file was made.
	Made() time.Time
	// Expiry is the expiry the file's address carries (carried false when
	// it carries none); valid false when its signature does not hold it.
	Expiry() (at time.Time, carried, valid bool)
}

// An MCPCall is an MCP tool call that has run, for a kind of the call
// stage; the MCP front implements it.
type MCPCall interface {
	// DropStream ends the call's event stream before its result.
	DropStream()
}

// An Answer is an answer held back before it goes, for a kind of the
// shape stage; the edge implements it.
type Answer interface {
	// Status is the answer's status.
	Status() int
	// Header is the answer's header.
	Header() http.Header
	// Body is the answer's body, held.
	Body() []byte
	// SetBody replaces the body (and the journal's copy of it).
	SetBody(b []byte)
}

// A Delivery is an answer held back and the connection it goes on, for a
// kind of the deliver stage; the edge implements it over the hijacked
// connection, and the in-memory transport over its Breaker. A kind ends
// the connection (Close, Reset) or sends the answer whole (Trickle).
type Delivery interface {
	// Status is the answer's status.
	Status() int
	// Header is the answer's header; its Content-Length is the held
	// body's.
	Header() http.Header
	// Body is the answer's body, held.
	Body() []byte
	// Cut sends the answer's head, saying Connection: close, and the first
	// n bytes of its body.
	Cut(n int64)
	// Send sends raw bytes on the connection.
	Send(raw []byte)
	// Trickle sends the whole answer at bytesPerSecond, in chunks ten
	// times a second.
	Trickle(bytesPerSecond int64)
	// Close closes the connection.
	Close()
	// Reset resets the connection (a TCP RST).
	Reset()
}

// Hit is a fault a request meets: a rule's (or a header's) spec, with its
// kind's parameters decoded.
type Hit struct {
	Spec
	// Rule is the id of the rule that struck, or HeaderRule, or
	// PreferRule.
	Rule string
	// rng draws the hit's own random values (a latency, garbage bytes).
	rng  *seed.RNG
	kind Kind
	reg  *registered
}

// FromHeader is the hit of a Mock-Fault header's spec (ParseHeader), drawn
// from the server's seed and the request's id.
func FromHeader(s Spec, serverSeed uint64, requestID string) *Hit {
	r := lookup(s.Kind)
	return &Hit{Spec: s, Rule: HeaderRule, rng: seed.For(serverSeed, "fault/header/"+requestID, 0), kind: r.decode(&s), reg: r}
}

// FromPrefer is the hit of a Prefer header's spec (ParsePrefer).
func FromPrefer(s Spec) *Hit {
	r := lookup(s.Kind)
	return &Hit{Spec: s, Rule: PreferRule, kind: r.decode(&s), reg: r}
}

// Stage is the stage of the hit's kind.
func (h *Hit) Stage() Stage { return h.reg.about.Stage }

// Strikes reports whether a header's fault strikes its request: it targets
// the request, and its probability, drawn from the request's id, says so.
func (h *Hit) Strikes(r Request) bool {
	if !matches(h.reg, h.kind, &h.Spec, h.Stage(), r) {
		return false
	}
	return h.Probability == nil || h.rng.Float64() < *h.Probability
}

// Session applies the hit to an MCP request as it arrives.
func (h *Hit) Session(r MCPRequest) {
	if k, ok := h.kind.(sessioner); ok {
		k.Session(r)
	}
}

// Admit is the answer the hit forces (nil: none).
func (h *Hit) Admit(a Admission) error {
	if k, ok := h.kind.(admitter); ok {
		return k.Admit(a)
	}
	return nil
}

// Access judges a file request: struck when the hit's kind met it, and the
// error to answer with.
func (h *Hit) Access(f FileRequest) (struck bool, err error) {
	if k, ok := h.kind.(accessor); ok {
		return k.Access(f)
	}
	return false, nil
}

// Expiry is when a file address handed out at now expires, when the hit's
// kind makes addresses expire.
func (h *Hit) Expiry(now time.Time) (time.Time, bool) {
	if k, ok := h.kind.(accessor); ok {
		return k.Expiry(now)
	}
	return time.Time{}, false
}

// Call applies the hit to an MCP tool call that has run.
func (h *Hit) Call(c MCPCall) {
	if k, ok := h.kind.(caller); ok {
		k.Call(c)
	}
}

// Delay draws the latency the hit adds (0: none).
func (h *Hit) Delay() time.Duration {
	if k, ok := h.kind.(delayer); ok {
		return k.Delay(h.rng)
	}
	return 0
}

// Shape changes the held answer as the hit's kind does, and names each
// change, for the journal.
func (h *Hit) Shape(a Answer) []string {
	if k, ok := h.kind.(shaper); ok {
		return k.Shape(a, h.rng)
	}
	return nil
}

// Deliver sends the held answer, broken as the hit's kind breaks it.
func (h *Hit) Deliver(d Delivery) {
	if k, ok := h.kind.(deliverer); ok {
		k.Deliver(d, h.rng)
	}
}
