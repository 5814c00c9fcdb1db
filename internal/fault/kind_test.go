package fault

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/problem"
)

// Kinds that do not hold together, for Register to refuse.
type (
	notAStruct int
	noFacts    struct {
		Fuse int64 `json:"test_fuse,omitempty"`
	}
	twiceDeclared struct {
		AfterBytes *int64 `json:"after_bytes,omitempty"`
	}
	withoutItsStage struct{}
)

func (notAStruct) About() About       { return About{Stage: Deliver} }
func (*noFacts) About() About         { return About{Stage: Call} }
func (*noFacts) Call(MCPCall)         {}
func (*twiceDeclared) About() About   { return About{Stage: Call} }
func (*twiceDeclared) Call(MCPCall)   {}
func (*withoutItsStage) About() About { return About{Stage: Deliver} }
func (k *twiceDeclared) Params() []*Param {
	return []*Param{Field(&k.AfterBytes, "After bytes", "again.")}
}

// Register refuses a kind that does not hold together, naming what is
// wrong, and keeps nothing of it.
func TestRegisterRefuses(t *testing.T) {
	before := Kinds()
	for _, tc := range []struct {
		name string
		kind Kind
		says string
	}{
		{"a value", notAStruct(0), "not a pointer to a struct"},
		{"no facts", new(noFacts), "without its facts"},
		{"declared twice", new(twiceDeclared), "declare it once"},
		{"no stage method", new(withoutItsStage), "does not implement the method of its stage deliver"},
		{"a name taken", new(truncate), "registered twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "test_" + strings.ReplaceAll(tc.name, " ", "_")
			if tc.says == "registered twice" {
				name = Truncate
			}
			msg := panicOf(func() { Register(name, tc.kind) })
			assert.Contains(t, msg, tc.says)
		})
	}
	assert.Equal(t, before, Kinds(), "nothing was kept")
	assert.Nil(t, byParam["test_fuse"])
}

func panicOf(f func()) (msg string) {
	defer func() { msg, _ = recover().(string) }()
	f()
	return ""
}

// A parameter shared by several kinds is one, declared once; a kind's own
// words on it (and its own requirement) are its alone.
func TestSharedParameters(t *testing.T) {
	p := byParam["platform"]
	require.NotNil(t, p)
	names, docs := p.takers()
	assert.Equal(t, []string{AccountDisconnected, PlatformFailure}, names)
	assert.NotEqual(t, docs[0], docs[1], "each says what it is to it")
	assert.Equal(t, "`"+AccountDisconnected+"`: "+docs[0]+" `"+PlatformFailure+"`: "+docs[1], p.description())
	assert.False(t, lookup(AccountDisconnected).param("platform").required)
	assert.True(t, lookup(PlatformFailure).param("platform").required)
	assert.Same(t, byParam["after_bytes"], lookup(Reset).param("after_bytes").Param)
	assert.Same(t, byParam["after_bytes"], lookup(Truncate).param("after_bytes").Param)
	assert.Nil(t, lookup(Reset).param("after_fraction"), "reset takes after_bytes alone")
	names, _ = byParam["model"].takers()
	assert.Equal(t, []string{JobFailure, Moderation, OutputFailure}, names)
	assert.Equal(t, "`job_failure`, `moderation`, `output_failure`: "+byParam["model"].doc, byParam["model"].description(), "one sentence for all")
}

// Validation reads each parameter's facts: what a violation says.
func TestValidateByTheFacts(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	f64 := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		spec          Spec
		field, reason string
		allowed       []any
	}{
		{Spec{Kind: Truncate}, "", "", nil},
		{Spec{Kind: Truncate, AfterBytes: i64(-1)}, "after_bytes", "must not be negative", nil},
		{Spec{Kind: Truncate, AfterFraction: f64(1)}, "after_fraction", "must be at least 0 and below 1", nil},
		{Spec{Kind: Garbage, Bytes: -3}, "bytes", "must be between 1 and 1048576", nil},
		{Spec{Kind: SlowBody}, "bytes_per_second", "is required", nil},
		{Spec{Kind: SlowBody, BytesPerSecond: -5}, "bytes_per_second", "must be at least 1", nil},
		{Spec{Kind: Status}, "status", "is required (or an example, for the operation's success status)", nil},
		{Spec{Kind: Status, Status: 418}, "status", "418 is not an error status every operation declares (401, 403, 429, 500 and 503): target an operation, or give drift: true to rehearse an answer outside the contract", []any{401, 403, 429, 500, 503}},
		{Spec{Kind: FileExpiry, TTLSeconds: i64(1), ExpiredStatus: 410}, "expired_status", "must be 403 or 404", []any{403, 404}},
		{Spec{Kind: JobFailure, FailStage: "later"}, "stage", "must be queued or processing", []any{"queued", "processing"}},
		{Spec{Kind: JobFailure, Code: "Bad Code"}, "code", "must be lower case letters, digits and underscores, starting with a letter, at most 64 characters", nil},
		{Spec{Kind: JobFailure, Model: strings.Repeat("m", MaxModel+1)}, "model", "must be at most 200 characters", nil},
		{Spec{Kind: FailureRate, Rate: f64(2)}, "rate", "must be between 0 and 1", nil},
		{Spec{Kind: Reset, Bytes: 4}, "bytes", "is not a parameter of reset (it takes after_bytes)", nil},
		{Spec{Kind: EmptyReply, AfterBytes: i64(1)}, "after_bytes", "is not a parameter of empty_reply (it takes none)", nil},
		{Spec{Kind: Truncate, AfterBytes: i64(1), AfterFraction: f64(0.5)}, "after_fraction", "give after_bytes or after_fraction, not both", nil},
		{Spec{Kind: Latency, Distribution: "fixed"}, "ms", "is required by the fixed distribution", nil},
	} {
		err := Validate(&tc.spec, "body", known)
		if tc.field == "" {
			assert.NoError(t, err, "%+v", tc.spec)
			continue
		}
		require.Error(t, err, "%+v", tc.spec)
		vs := problem.AsError(err).Details["violations"].([]problem.Violation)
		require.Len(t, vs, 1, "%+v: %v", tc.spec, vs)
		assert.Equal(t, tc.field, vs[0].Field)
		assert.Equal(t, tc.reason, vs[0].Reason)
		assert.Equal(t, tc.allowed, vs[0].Allowed)
	}
}

// The header reads each parameter by the type of its field.
func TestParseHeaderByType(t *testing.T) {
	for _, tc := range []struct{ header, says string }{
		{"evolve; fields=maybe", `parameter fields: "maybe" is not true or false`},
		{"truncate; after_fraction=half", `parameter after_fraction: "half" is not a number`},
		{"garbage_then_close; bytes=0", "parameter bytes: must be positive"},
		{"reset; fuse=1", "parameter fuse: unknown parameter"},
		{"reset; first=1", "targets rules of the control API"},
		{"reset; probability=often", `parameter probability: "often" is not a number`},
		{"job_failure", "decided in the simulation"},
		{"reset; bytes=4", "Mock-Fault: bytes"},
	} {
		_, err := ParseHeader([]string{tc.header}, known)
		assert.ErrorContains(t, err, tc.says, tc.header)
	}
	s, err := ParseHeader([]string{"evolve; fields=false; probability=0.5"}, known)
	require.NoError(t, err)
	assert.False(t, *s.Fields)
	assert.Equal(t, 0.5, *s.Probability)
	s, err = ParseHeader([]string{"file_expiry; ttl_seconds=60; expired_status=404"}, known)
	require.NoError(t, err)
	assert.EqualValues(t, 60, *s.TTLSeconds)
	assert.Equal(t, 404, s.ExpiredStatus)
}

// recorded is a Delivery that records what a kind did with it.
type recorded struct {
	body  []byte
	calls []string
	sent  []byte
}

func (d *recorded) Status() int         { return 200 }
func (d *recorded) Header() http.Header { return http.Header{} }
func (d *recorded) Body() []byte        { return d.body }
func (d *recorded) Cut(n int64)         { d.calls = append(d.calls, "cut "+itoa(n)) }
func (d *recorded) Send(raw []byte) {
	d.calls = append(d.calls, "send "+itoa(int64(len(raw))))
	d.sent = raw
}
func (d *recorded) Trickle(bps int64) { d.calls = append(d.calls, "trickle "+itoa(bps)) }
func (d *recorded) Close()            { d.calls = append(d.calls, "close") }
func (d *recorded) Reset()            { d.calls = append(d.calls, "reset") }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Each delivery kind breaks the answer with the Delivery's primitives.
func TestDeliveryKinds(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	f64 := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		spec  Spec
		body  int
		calls []string
	}{
		{Spec{Kind: Reset}, 100, []string{"reset"}},
		{Spec{Kind: Reset, AfterBytes: i64(10)}, 100, []string{"cut 10", "reset"}},
		{Spec{Kind: Reset, AfterBytes: i64(10)}, 0, []string{"reset"}},
		{Spec{Kind: EmptyReply}, 100, []string{"close"}},
		{Spec{Kind: Truncate}, 100, []string{"cut 50", "close"}},
		{Spec{Kind: Truncate, AfterFraction: f64(0.25)}, 100, []string{"cut 25", "close"}},
		{Spec{Kind: Truncate, AfterBytes: i64(500)}, 100, []string{"cut 100", "close"}},
		{Spec{Kind: FileTruncate, AfterBytes: i64(7)}, 100, []string{"cut 7", "close"}},
		{Spec{Kind: SlowBody, BytesPerSecond: 64}, 100, []string{"trickle 64"}},
		{Spec{Kind: Garbage}, 100, []string{"send 256", "close"}},
		{Spec{Kind: Garbage, Bytes: 3}, 100, []string{"send 3", "close"}},
	} {
		require.NoError(t, Validate(&tc.spec, "body", known), "%+v", tc.spec)
		h := FromHeader(tc.spec, 1, "req_1")
		d := &recorded{body: make([]byte, tc.body)}
		h.Deliver(d)
		assert.Equal(t, tc.calls, d.calls, "%+v", tc.spec)
	}
	a, b := &recorded{}, &recorded{}
	FromHeader(Spec{Kind: Garbage}, 1, "req_1").Deliver(a)
	FromHeader(Spec{Kind: Garbage}, 1, "req_1").Deliver(b)
	assert.Equal(t, a.sent, b.sent, "the garbage is drawn from the seed and the request")
}

// controlapi.FaultSpec is made from the registry: its source parses, and
// its fields are Spec's, in the same order, with the same types and tags.
func TestFaultSpecSource(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "faultspec.go", FaultSpecSource(), parser.ParseComments)
	require.NoError(t, err)
	var got []string
	ast.Inspect(f, func(n ast.Node) bool {
		if st, ok := n.(*ast.StructType); ok {
			for _, fl := range st.Fields.List {
				require.NotNil(t, fl.Doc, "%s has a doc", fl.Names[0])
				got = append(got, fl.Names[0].Name+" "+fl.Tag.Value)
			}
		}
		return true
	})
	var want []string
	st := reflect.TypeFor[Spec]()
	for i := range st.NumField() {
		want = append(want, st.Field(i).Name+" `"+string(st.Field(i).Tag)+"`")
	}
	assert.Equal(t, want, got)
}
