package mediamock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

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
