package controlplane

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Call is one call of an operation of control.json, whatever front
// carried it: its credential, its parameters and its JSON body as sent.
type Call struct {
	// Op is the operation's operationId.
	Op string
	// Authorization is the credential, as an Authorization header value;
	// "" for none.
	Authorization string
	// Vars are the path parameters, Query the query parameters.
	Vars  map[string]string
	Query url.Values
	// ContentType and Body are the body as the front read it; BodyErr is
	// the error that cut it short (a body over its cap), if one did.
	ContentType string
	Body        []byte
	BodyErr     error
	// Accept is the media types the caller accepts (an Accept header's
	// value), "" for any.
	Accept string
	// View renders records with the links the caller can reach.
	View wire.View
}

// opHealth answers before any credential: it is what a probe reads.
const opHealth = "getHealth"

// request is what an operation's handler is given besides its input: the
// call's context, the plane, the scope its credential reaches and the
// view its records render with.
type request struct {
	ctx    context.Context
	p      *Plane
	scope  Scope
	view   wire.View
	accept string
}

// operation serves one operation of control.json: it binds a call's
// parameters and body to the handler's input, and runs the handler.
type operation interface {
	serve(r *request, c *Call) (int, any, error)
}

// op is a handler that takes its input as a value of type In, a struct:
// fields tagged path:"name" or query:"name" are the parameters (a field
// with default:"v" is v when the parameter is absent or not of its type;
// a pointer is nil when absent), the field tagged body:"" is the JSON
// body, decoded once (into the type the handler reads, so that what the
// decoder says of a value it cannot hold names that type).
type op[In any] func(r *request, in In) (int, any, error)

func (h op[In]) serve(r *request, c *Call) (int, any, error) {
	var in In
	if err := bind(&in, c); err != nil {
		return 0, nil, err
	}
	return h(r, in)
}

// Operations are the operationIds the plane serves, in no order.
func Operations() []string {
	out := make([]string, 0, len(operations))
	for id := range operations {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Serves reports whether the plane serves an operation.
func Serves(op string) bool { return operations[op] != nil }

// Invoke runs one call of an operation: the credential and the scope it
// reaches (Authorize), then Serve. The control MCP server calls it for
// each tool call; the control API takes the two steps itself, with its
// own HTTP checks between them.
func (p *Plane) Invoke(ctx context.Context, c *Call) (int, any, error) {
	var s Scope
	if c.Op != opHealth {
		var err error
		if s, err = p.Credential(c.Op, c.Authorization, c.Query); err == nil {
			s, err = p.Narrow(c.Op, s, c.Vars, c.Query)
		}
		if err != nil {
			return 0, nil, err
		}
	}
	return p.Serve(ctx, c, s)
}

// Serve runs a call the credential's scope s lets in: the call is
// validated against control.json (its parameters and body), its body is
// decoded once into the handler's input, and the handler answers with a
// status and a body to encode as JSON (or a Raw), or an error.
func (p *Plane) Serve(ctx context.Context, c *Call, s Scope) (int, any, error) {
	h := operations[c.Op]
	if h == nil {
		return 0, nil, &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No control operation " + c.Op + "."}
	}
	if c.Op != opHealth { // no parameters, no body: nothing to validate
		if err := p.Validate(ctx, c); err != nil {
			return 0, nil, err
		}
	}
	return h.serve(&request{ctx: ctx, p: p, scope: s, view: c.View, accept: c.Accept}, c)
}

// Validate checks a call against control.json: the control API validates
// the operations it serves itself with it. The call's parameters are
// judged as the front read them and its body as it decodes, once
// (contract.BodyOf), by the contract's one validator (contract.Validate).
func (p *Plane) Validate(_ context.Context, c *Call) error {
	doc, err := p.Document()
	if err != nil {
		return err
	}
	in := contract.Input{Path: c.Vars, Query: c.Query}
	if in.Query == nil {
		in.Query = url.Values{}
	}
	if c.Body != nil || c.BodyErr != nil {
		in.Body = doc.BodyOf(c.Op, c.ContentType, c.Body, c.BodyErr)
	}
	return doc.Validate(c.Op, &in, nil)
}

// Raw is an answer that is not JSON (a report as text, as JUnit XML).
type Raw struct {
	ContentType string
	Data        []byte
}

// Stream is an answer written as it is made (a journal, as JSON or as
// HAR), of any size, whose memory does not grow with it: a front that can stream calls Write with its body's writer once
// the head is sent; Encode buffers it for one that cannot. Filename, when
// set, names the file a browser saves it as.
type Stream struct {
	ContentType string
	Filename    string
	Write       func(w io.Writer) error
}

// bind fills in (a pointer to a struct) from a call: the field tagged
// body:"" is decoded from its JSON body, if it has one; fields tagged
// path:"name" and query:"name" are its parameters.
func bind(in any, c *Call) error {
	v := reflect.ValueOf(in).Elem()
	b := bindingOf(v.Type())
	if b.body != nil && (len(c.Body) > 0 || c.BodyErr != nil) {
		if c.BodyErr != nil {
			return wire.BodyError(c.BodyErr)
		}
		if err := wire.UnmarshalJSON(c.Body, v.FieldByIndex(b.body).Addr().Interface()); err != nil {
			return err
		}
	}
	for _, f := range b.params {
		raw, ok := "", false
		if f.path {
			raw, ok = c.Vars[f.name]
		} else if vs, has := c.Query[f.name]; has {
			ok = true
			if len(vs) > 0 {
				raw = vs[0]
			}
		}
		fv := v.FieldByIndex(f.index)
		switch {
		case ok && set(fv, raw):
		case f.def != "":
			set(fv, f.def)
		case ok && fv.Kind() == reflect.Pointer:
			fv.Set(reflect.New(fv.Type().Elem())) // present, not of its type: its zero
		}
	}
	return nil
}

// set parses raw into a field of a parameter's type (a pointer is made);
// false when raw is not of its type.
func set(fv reflect.Value, raw string) bool {
	t := fv.Type()
	if t.Kind() == reflect.Pointer {
		x := reflect.New(t.Elem())
		if !set(x.Elem(), raw) {
			return false
		}
		fv.Set(x)
		return true
	}
	switch t.Kind() {
	case reflect.String:
		fv.SetString(raw)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || t.Kind() == reflect.Int && strconv.IntSize == 32 && int64(int32(n)) != n {
			return false
		}
		fv.SetInt(n)
	case reflect.Uint64:
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return false
		}
		fv.SetUint(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return false
		}
		fv.SetFloat(n)
	default:
		panic("controlplane: a parameter of type " + t.String())
	}
	return true
}

// binding is how an input type is bound: its parameters' fields, and
// the field of its body (nil: it takes none).
type binding struct {
	params []param
	body   []int
}

type param struct {
	name  string
	path  bool
	def   string
	index []int
}

// bindingOf reads an input type's tags (an input has a few fields: they
// are read at each call, which costs little beside its validation).
func bindingOf(t reflect.Type) binding {
	var b binding
	b.read(t, nil)
	return b
}

func (b *binding) read(t reflect.Type, at []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		f.Index = append(slices.Clone(at), f.Index...)
		if f.Anonymous && f.Tag == "" && f.Type.Kind() == reflect.Struct { // parameters many inputs share
			b.read(f.Type, f.Index)
			continue
		}
		if name, ok := f.Tag.Lookup("path"); ok {
			b.params = append(b.params, param{name: name, path: true, def: f.Tag.Get("default"), index: f.Index})
		} else if name, ok := f.Tag.Lookup("query"); ok {
			b.params = append(b.params, param{name: name, def: f.Tag.Get("default"), index: f.Index})
		} else if _, ok := f.Tag.Lookup("body"); ok {
			b.body = f.Index
		} else {
			panic("controlplane: field " + t.String() + "." + f.Name + " is neither a parameter nor the body")
		}
	}
}

// none is the input of an operation that takes nothing.
type none struct{}

// operations are the operations of control.json the plane serves, by
// operationId; the control API serves the rest itself (what only HTTP
// carries), and a start-time check holds the two to the document.
var operations = map[string]operation{
	opHealth:               op[none](health),
	"getClock":             op[none](getClock),
	"advanceClock":         op[advanceInput](advance),
	"setClock":             op[setClockInput](setClock),
	"setClockMode":         op[clockModeInput](clockMode),
	"resyncClock":          op[none](resyncClock),
	"getFaults":            op[none](getFaults),
	"clearFaults":          op[none](clearFaults),
	"failNext":             op[failNextInput](failNext),
	"setFailureRate":       op[failureRateInput](failureRate),
	"failPlatform":         platform(true),
	"unfailPlatform":       platform(false),
	"setLatency":           op[latencyInput](setLatency),
	"clearLatency":         op[clearLatencyInput](clearLatency),
	"forceResponses":       op[forceInput](force),
	"addFaultRule":         op[addRuleInput](addFaultRule),
	"deleteFaultRule":      op[ruleInput](deleteFaultRule),
	"controlAsset":         op[jobInput](controlAsset),
	"controlEncore":        op[jobInput](controlEncore),
	"cancelPublication":    op[idInput](cancelPublication),
	"listJobs":             op[jobsInput](listJobs),
	"listAllAssets":        op[assetsInput](listAllAssets),
	"listAllPublications":  op[publicationsInput](listAllPublications),
	"listWorkspaces":       op[none](listWorkspaces),
	"addWorkspace":         op[addWorkspaceInput](addWorkspace),
	"getWorkspace":         op[idInput](getWorkspace),
	"addToken":             op[addTokenInput](addToken),
	"grantCredits":         op[grantInput](grant),
	"getLedger":            op[idInput](ledger),
	"getJournal":           op[journalInput](getJournal),
	"clearJournal":         op[none](clearJournal),
	"waitJournal":          op[waitInput](waitJournal),
	"getCoverage":          op[none](getCoverage),
	"resetCoverage":        op[none](resetCoverage),
	"getReport":            op[reportInput](getReport),
	"reset":                op[none](reset),
	"listSandboxes":        op[none](listSandboxes),
	"createSandbox":        op[createSandboxInput](createSandbox),
	"getSandbox":           op[sandboxInput](getSandbox),
	"deleteSandbox":        op[sandboxInput](deleteSandbox),
	"resetSandbox":         op[sandboxInput](resetSandbox),
	"runSandbox":           op[runInput](runSandbox),
	"listNamedSnapshots":   op[none](listSnapshots),
	"saveNamedSnapshot":    op[saveSnapshotInput](saveSnapshot),
	"restoreNamedSnapshot": op[snapshotInput](restoreSnapshot),
	"deleteNamedSnapshot":  op[snapshotInput](deleteSnapshot),
}

// TakesBody reports whether an operation the plane serves takes a JSON
// body: a front reads a request's body for those alone.
func TakesBody(op string) bool {
	h, ok := operations[op].(interface{ takesBody() bool })
	return ok && h.takesBody()
}

func (op[In]) takesBody() bool {
	var in In
	return bindingOf(reflect.TypeOf(in)).body != nil
}

// Encode is an answer as the control API sends it: its status, its
// Content-Type and its bytes (the error object for err; a body as JSON, or
// a Raw's bytes as they are).
func Encode(status int, body any, err error) (int, string, []byte) {
	if err != nil {
		status, body = wire.ErrorOf(err)
	}
	if raw, ok := body.(Raw); ok {
		return status, raw.ContentType, raw.Data
	}
	if st, ok := body.(Stream); ok {
		var b bytes.Buffer
		if err := st.Write(&b); err != nil {
			status, body := wire.ErrorOf(err)
			return Encode(status, body, nil)
		}
		return status, st.ContentType, b.Bytes()
	}
	b, ok := wire.Marshal(body)
	defer b.Release()
	if !ok {
		status = http.StatusInternalServerError
	}
	return status, "application/json", bytes.Clone(b.Bytes())
}
