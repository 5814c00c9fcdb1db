package refdoc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"slices"
	"strings"
)

// GoAPI is the page docs/reference/go-api.md: the exported API of the Go
// package in dir (the repository's root, github.com/mediamock/mediamock),
// read from its own source and doc comments with go/doc, as `go doc`
// shows it: every function and method with its signature and the first
// sentence of its comment, every type with its fields, every constant
// and variable. Test files are left out.
func GoAPI(dir string) ([]byte, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	var name string
	for n, p := range pkgs {
		if strings.HasSuffix(n, "_test") {
			continue
		}
		name = n
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	if name == "" {
		return nil, fmt.Errorf("refdoc: no Go package in %s", dir)
	}
	slices.SortFunc(files, func(a, b *ast.File) int {
		return strings.Compare(fset.File(a.Pos()).Name(), fset.File(b.Pos()).Name())
	})
	const importPath = "github.com/mediamock/mediamock"
	pkg, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return nil, err
	}

	p := New("Go API", "the Go package's own doc comments (go/doc)", Command)
	p.Para(fmt.Sprintf("The package %s (`import %q`), as its doc comments say it: every exported function and "+
		"method with its signature, every type with its fields. `go doc %s.Server.Balance` (say) prints one of them in "+
		"full; [Your first Go test](../tutorials/go.md) shows them at work.", Code(pkg.Name), importPath, importPath))
	p.Para(pkg.Synopsis(pkg.Doc))

	sig := func(n ast.Node) string {
		var b bytes.Buffer
		cfg := printer.Config{Mode: printer.UseSpaces, Tabwidth: 4}
		if err := cfg.Fprint(&b, fset, n); err != nil {
			return fmt.Sprintf("<%v>", err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	funcSig := func(f *doc.Func) string {
		d := *f.Decl
		d.Body, d.Doc = nil, nil
		return sig(&d)
	}
	funcRows := func(fs []*doc.Func) [][]string {
		var rows [][]string
		for _, f := range fs {
			rows = append(rows, []string{Code(funcSig(f)), pkg.Synopsis(f.Doc)})
		}
		return rows
	}

	if len(pkg.Funcs) > 0 {
		p.Heading(2, "Functions")
		p.Table([]string{"Function", "What it does"}, funcRows(pkg.Funcs))
	}

	p.Heading(2, "Types")
	var index []string
	for _, t := range pkg.Types {
		index = append(index, fmt.Sprintf("[%s](#%s)", t.Name, Slug(t.Name)))
	}
	p.Para(strings.Join(index, ", "))
	for _, t := range pkg.Types {
		p.Heading(3, t.Name)
		spec := typeSpec(t)
		p.Para(Code(typeLine(spec, sig)) + ": " + pkg.Synopsis(t.Doc))
		if st, ok := spec.Type.(*ast.StructType); ok && spec.Assign == 0 {
			var rows [][]string
			for _, f := range st.Fields.List {
				var names []string
				for _, n := range f.Names {
					if n.IsExported() {
						names = append(names, n.Name)
					}
				}
				if len(f.Names) == 0 { // embedded
					if id := embeddedName(f.Type); id != "" && ast.IsExported(id) {
						names = append(names, id)
					}
				}
				if len(names) == 0 {
					continue
				}
				text := f.Doc.Text()
				if text == "" {
					text = f.Comment.Text()
				}
				rows = append(rows, []string{Code(strings.Join(names, ", ") + " " + sig(f.Type)), pkg.Synopsis(text)})
			}
			if len(rows) > 0 {
				p.Table([]string{"Field", "What it holds"}, rows)
			}
		}
		if len(t.Funcs)+len(t.Methods) > 0 {
			p.Table([]string{"Function or method", "What it does"}, funcRows(append(slices.Clone(t.Funcs), t.Methods...)))
		}
	}

	values := func(title string, vs []*doc.Value) {
		if len(vs) == 0 {
			return
		}
		p.Heading(2, title)
		var rows [][]string
		for _, v := range vs {
			for _, s := range v.Decl.Specs {
				vs := s.(*ast.ValueSpec)
				text := vs.Doc.Text()
				if text == "" {
					text = vs.Comment.Text()
				}
				if text == "" {
					text = v.Doc
				}
				for _, n := range vs.Names {
					if n.IsExported() {
						rows = append(rows, []string{Code(n.Name), pkg.Synopsis(text)})
					}
				}
			}
		}
		p.Table([]string{"Name", "What it is"}, rows)
	}
	var consts, vars []*doc.Value
	consts = append(consts, pkg.Consts...)
	vars = append(vars, pkg.Vars...)
	for _, t := range pkg.Types {
		consts = append(consts, t.Consts...)
		vars = append(vars, t.Vars...)
	}
	values("Constants", consts)
	values("Variables", vars)
	return p.Bytes(), nil
}

// typeSpec is the spec of a documented type in its declaration.
func typeSpec(t *doc.Type) *ast.TypeSpec {
	for _, s := range t.Decl.Specs {
		if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == t.Name {
			return ts
		}
	}
	return nil
}

// typeLine is a type's declaration on one line, a struct's or an
// interface's body left out: "type Server struct", "type FaultSpec =
// controlapi.FaultSpec", "type Option func(*Options)".
func typeLine(spec *ast.TypeSpec, sig func(ast.Node) string) string {
	if spec == nil {
		return "type"
	}
	line := "type " + spec.Name.Name
	if spec.TypeParams != nil {
		line += sig(spec.TypeParams)
	}
	if spec.Assign != 0 {
		line += " ="
	}
	switch spec.Type.(type) {
	case *ast.StructType:
		if spec.Assign == 0 {
			return line + " struct"
		}
	case *ast.InterfaceType:
		if spec.Assign == 0 {
			return line + " interface"
		}
	}
	return line + " " + sig(spec.Type)
}

// embeddedName is the type name of an embedded field: T, *T, pkg.T.
func embeddedName(x ast.Expr) string {
	switch e := x.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
