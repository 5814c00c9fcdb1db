package controlapi_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/sim"
	"github.com/mediamock/mediamock/spec"
)

// Every exported type of the package says what it is, and every exported
// field of its structs what it holds: go doc is where a user reads them.
// The package imports the standard library alone, so that every package
// of the project may import it.
func TestEveryTypeAndFieldIsDocumented(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	structs := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			first, _, _ := strings.Cut(strings.Trim(imp.Path.Value, `"`), "/")
			assert.NotContains(t, first, ".", "%s imports %s: the package is a leaf of the standard library", name, imp.Path.Value)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gen.Specs) == 1 {
					doc = gen.Doc
				}
				if assert.NotNil(t, doc, "type %s has a doc comment", ts.Name) {
					assert.True(t, strings.HasPrefix(doc.Text(), ts.Name.Name+" "), "the doc of %s starts with its name: %q", ts.Name, doc.Text())
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				structs++
				for _, field := range st.Fields.List {
					names := field.Names
					if len(names) == 0 { // embedded
						names = []*ast.Ident{ast.NewIdent(types(field.Type))}
					}
					for _, n := range names {
						if n.IsExported() {
							assert.True(t, field.Doc != nil || field.Comment != nil, "field %s.%s has a doc comment", ts.Name, n)
						}
					}
				}
			}
		}
	}
	assert.GreaterOrEqual(t, structs, 12, "the package's structs were found")
}

// types names an embedded field's type.
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return types(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// A journal entry's times go on the wire like every timestamp of the
// control API, to the second with a UTC offset, and come back as
// time.Time; the keys keep the order of the fields, and bodies are shown
// as they went, HTML characters and all.
func TestJournalEntryJSON(t *testing.T) {
	at := time.Date(2025, 6, 1, 14, 30, 15, 500_000_000, time.FixedZone("CEST", 2*3600))
	e := controlapi.JournalEntry{ID: "req_1", Seq: 7, Time: at, SimTime: at.Add(time.Hour), Method: "POST", Path: "/api/v1/generations",
		Status: 201, RequestBody: `{"prompt":"<a & b>"}`, Evolved: []string{"keys reordered"}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // as the control API encodes
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(e))
	b := buf.Bytes()
	s := string(b)
	assert.True(t, strings.HasPrefix(s, `{"id":"req_1","seq":7,"time":"2025-06-01T12:30:15+00:00","sim_time":"2025-06-01T13:30:15+00:00","method":"POST",`), s)
	assert.Contains(t, s, `"request_body":"{\"prompt\":\"<a & b>\"}"`)
	assert.Equal(t, 1, strings.Count(s, `"time"`), "the time once")
	assert.Equal(t, 1, strings.Count(s, `"seq"`), "the number once")

	var back controlapi.JournalEntry
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, back.Time.Equal(at.Truncate(time.Second)), back.Time)
	assert.True(t, back.SimTime.Equal(at.Add(time.Hour).Truncate(time.Second)), back.SimTime)
	back.Time, back.SimTime = e.Time, e.SimTime
	assert.Equal(t, e, back, "every other field comes back as it went")
}

// The table lists the operations, the lifecycle paths by name and the
// failure paths, each count by name.
func TestCoverageWriteTable(t *testing.T) {
	c := controlapi.Coverage{
		Operations: []controlapi.OperationCoverage{{Operation: "getAccount", Method: "GET", Path: "/account",
			Statuses: []controlapi.StatusCoverage{{Status: 200, Count: 3, Declared: true}, {Status: 401, Declared: true}, {Status: 418, Count: 1}},
			Fronts:   map[string]int{"rest": 3, "mcp": 1}}},
		Lifecycle:    map[string]int{"upload": 0, "generation_completed": 2},
		FailurePaths: []controlapi.FailurePath{{Kind: "reset", Met: 1, Next: map[string]int{"retried": 1}}, {Kind: "truncate", Next: map[string]int{}}},
		Summary: controlapi.CoverageSummary{OperationsExercised: 1, Operations: 1, StatusesExercised: 1, StatusesDeclared: 2,
			LifecycleTaken: 1, LifecyclePaths: 2, FaultKindsMet: 1, FaultKinds: 2},
	}
	var b strings.Builder
	require.NoError(t, c.WriteTable(&b))
	var lines []string
	for l := range strings.Lines(b.String()) {
		lines = append(lines, strings.TrimRight(l, " \n"))
	}
	assert.Equal(t, []string{
		"OPERATION   METHOD PATH   EXERCISED    NEVER EXERCISED  FRONTS",
		"getAccount  GET /account  200×3 418×1  401              mcp×1 rest×3",
		"",
		"LIFECYCLE PATH        TIMES",
		"generation_completed  2",
		"upload                0",
		"",
		"FAILURE PATH  MET  THEN",
		"reset         1    retried×1",
		"truncate      0    -",
		"",
		"operations exercised 1/1, declared statuses 1/2, lifecycle paths 1/2, fault kinds met 1/2",
	}, lines)
}

// jsonFields are the JSON names of a struct's fields, those of embedded
// structs included, as encoding/json flattens them.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFields(f.Type)...)
		case name != "" && name != "-":
			out = append(out, name)
		}
	}
	return out
}

// The Go types of what the control API shows have every field it shows,
// and only those: a field added to control.json and not to the Go type
// fails here. A schema is named by its path in components.schemas: a
// property's name steps into it, [] into an array's items.
func TestGoTypesHaveTheControlAPIFields(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(spec.Control, &doc))
	for _, tt := range []struct {
		schema string
		v      any
	}{
		{"Faults", controlapi.Faults{}},
		{"FailRule", controlapi.FailRule{}},
		{"Faults.forced_responses.[]", controlapi.ForcedResponse{}},
		{"FaultSpec", controlapi.FaultSpec{}},
		{"FaultRule", controlapi.FaultRule{}},
		{"NamedSnapshot", controlapi.NamedSnapshot{}},
		{"JournalEntry", controlapi.JournalEntry{}},
		{"Coverage", controlapi.Coverage{}},
		{"Coverage.operations.[]", controlapi.OperationCoverage{}},
		{"Coverage.operations.[].statuses.[]", controlapi.StatusCoverage{}},
		{"Coverage.failure_paths.[]", controlapi.FailurePath{}},
		{"Coverage.summary", controlapi.CoverageSummary{}},
	} {
		t.Run(tt.schema, func(t *testing.T) {
			path := strings.Split(tt.schema, ".")
			schema, _ := doc.Components.Schemas[path[0]].(map[string]any)
			for _, step := range path[1:] {
				if step == "[]" {
					schema, _ = schema["items"].(map[string]any)
				} else {
					props, _ := schema["properties"].(map[string]any)
					schema, _ = props[step].(map[string]any)
				}
			}
			props, _ := schema["properties"].(map[string]any)
			var want []string
			for name := range props {
				want = append(want, name)
			}
			require.NotEmpty(t, want, "control.json has the schema %s", tt.schema)
			assert.ElementsMatch(t, want, jsonFields(reflect.TypeOf(tt.v)), "the Go type of %s", tt.schema)
		})
	}
}

// A journal entry's times go on the wire in the format of every timestamp
// of the API (sim.TimeLayout), to the second.
func TestJournalTimesOnTheWire(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 7, 250_000_000, time.UTC)
	var b bytes.Buffer
	require.NoError(t, json.NewEncoder(&b).Encode(controlapi.JournalEntry{Time: at, SimTime: at.Add(time.Minute)}))
	assert.Contains(t, b.String(), `"time":"`+sim.FormatTime(at)+`"`)
	assert.Contains(t, b.String(), `"sim_time":"`+sim.FormatTime(at.Add(time.Minute))+`"`)
}
