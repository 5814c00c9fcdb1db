package mediamock_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/sim"
)

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
	require.NoError(t, json.Unmarshal(mediamock.ControlDocument, &doc))
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

// The root package names no type of internal/: a type it takes or returns
// is its own or a public package's, so that go doc shows its fields.
func TestRootAliasesAreNotInternal(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	aliases := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		imports := map[string]string{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() || !ts.Assign.IsValid() {
				return true
			}
			aliases++
			ast.Inspect(ts.Type, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok {
						assert.NotContains(t, imports[pkg.Name]+"/", "/internal/", "%s: %s is an alias of %s.%s", fset.Position(ts.Pos()), ts.Name, imports[pkg.Name], sel.Sel)
					}
				}
				return true
			})
			return true
		})
	}
	assert.Greater(t, aliases, 10, "the root's aliases were found")
	// The same, through the types: those of the control API are controlapi's.
	for _, v := range []any{mediamock.FaultSpec{}, mediamock.FaultRule{}, mediamock.Faults{}, mediamock.FailRule{}, mediamock.ForcedResponse{},
		mediamock.JournalEntry{}, mediamock.JournalFilter{}, mediamock.Coverage{}, mediamock.OperationCoverage{}, mediamock.StatusCoverage{},
		mediamock.CoverageSummary{}, mediamock.FailurePath{}} {
		assert.Equal(t, "github.com/mediamock/mediamock/controlapi", reflect.TypeOf(v).PkgPath(), "%T", v)
	}
}

// A journal entry's times go on the wire in the format of every timestamp
// of the API (sim.TimeLayout), to the second.
func TestJournalTimesOnTheWire(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 7, 250_000_000, time.UTC)
	var b bytes.Buffer
	require.NoError(t, json.NewEncoder(&b).Encode(mediamock.JournalEntry{Time: at, SimTime: at.Add(time.Minute)}))
	assert.Contains(t, b.String(), `"time":"`+sim.FormatTime(at)+`"`)
	assert.Contains(t, b.String(), `"sim_time":"`+sim.FormatTime(at.Add(time.Minute))+`"`)
}
