// Command gen writes every file of the repository that is made from
// another source: control.json's derived parts and controlapi.FaultSpec
// (from the fault kinds' registry) and the generated pages of
// docs/reference (from the kinds, the flag sets, the documents, the rules
// and the tools). It is run from the repository's
// root by
//
//	go generate ./...
//
// (the root's generate.go), which also runs the other //go:generate lines
// of the tree (contract_test/oapigen's client, oapi-codegen from the module
// proxy). It writes only the files whose content changed and says which;
// a second run writes nothing. Each file is made by a plain function of
// the package that owns its source (Files); its test (TestGeneratedFiles)
// makes them all in memory and fails, naming the files and the command,
// when a committed one differs.
//
// docs/dashboard.png is not among them: it is a Chromium screenshot, whose
// pixels depend on the browser and its fonts, so no test here could hold
// it. The dashboard's browser test writes it when MEDIAMOCK_DASHBOARD_PNG
// names the file (CONTRIBUTING.md, "The dashboard").
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mediamock/mediamock/internal/cli"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/mcp"
	"github.com/mediamock/mediamock/internal/refdoc"
	"github.com/mediamock/mediamock/internal/report"
)

// A File is a generated file: its path from the repository's root and
// the function that makes its content. Make reads the sources it needs
// from the run, which answers with what an earlier File of the list made
// (so a page of control.json is made from the control.json of this run,
// and one run reaches the fixed point).
type File struct {
	Path string
	Make func(r *Run) ([]byte, error)
}

// Files is every generated file, in the order they are made: a file
// comes after the generated files it reads. A new one is a line here:
// page(pkg.Func) for a func() []byte of the package that owns its
// source, fromOpenAPI or fromControl for a page of a document, or a Make
// of its own.
var Files = []File{
	{"spec/control.json", controlDocument},
	{"internal/control/routes.gen.go", controlRoutes},
	{"controlapi/faultspec.go", page(fault.FaultSpecSource)},
	{"internal/contract/prepared/service.go", preparedService},
	{"docs/reference/fault-kinds.md", faultKinds},
	{"docs/reference/cli.md", page(cli.Reference)},
	{"docs/reference/client-findings.md", page(report.Reference)},
	{"docs/reference/operations.md", fromOpenAPI(func(c *contract.Contract) ([]byte, error) { return contract.OperationsReference(c), nil })},
	{"docs/reference/mcp-tools.md", fromOpenAPI(mcp.ToolsReference)},
	{"docs/reference/control-api.md", fromControl(controlReference)},
	{"docs/reference/control-mcp-tools.md", fromControl(mcp.ControlToolsReference)},
	{"docs/reference/go-api.md", fromSource(".", refdoc.GoAPI)},
	{"docs/reference/python-helpers.md", needs("python3", fromSource("packages/python/mediamock", refdoc.PythonHelpers))},
	{"docs/reference/typescript-helpers.md", needs("node", needsFile("packages/npm/server/node_modules/typescript/package.json",
		fromSource("packages/npm/server", refdoc.TypeScriptHelpers)))},
}

// A Run makes the files of one repository's tree.
type Run struct {
	root string // the tree the files are made for
	src  string // the tree whose code and packages are read (the root, but in tests)
	made map[string][]byte
}

// ErrSkipped is wrapped by the error of a Make whose source needs a tool
// the machine lacks (python3, node and the npm package's own typescript):
// the file is left as committed, and the staleness test says so (or fails
// when MEDIAMOCK_REFDOC_REQUIRE=1).
var ErrSkipped = errors.New("skipped")

// Read is the content of the file at path (from the repository's root):
// what this run made of it, else the committed file.
func (r *Run) Read(path string) ([]byte, error) {
	if b, ok := r.made[path]; ok {
		return b, nil
	}
	return os.ReadFile(filepath.Join(r.root, filepath.FromSlash(path)))
}

// An Output is a generated file's path and content; Skipped, when set,
// says why it was not made (its content is then the committed one).
type Output struct {
	Path    string
	Content []byte
	Skipped string
}

// Generate makes every file of files, in order, for the tree at root,
// writing nothing. A Go file is formatted as gofmt does.
func Generate(root string, files []File) ([]Output, error) {
	return generate(root, root, files)
}

// generate is Generate reading the code and packages the files are made
// from in the tree at src.
func generate(root, src string, files []File) ([]Output, error) {
	r := &Run{root: root, src: src, made: map[string][]byte{}}
	out := make([]Output, 0, len(files))
	for _, f := range files {
		b, err := f.Make(r)
		if errors.Is(err, ErrSkipped) {
			if b, err = r.Read(f.Path); errors.Is(err, fs.ErrNotExist) && r.src != r.root {
				b, err = os.ReadFile(filepath.Join(r.src, filepath.FromSlash(f.Path))) // as the code's tree has it
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			r.made[f.Path] = b
			out = append(out, Output{Path: f.Path, Content: b, Skipped: err2text(f, r)})
			continue
		}
		if err == nil && strings.HasSuffix(f.Path, ".go") {
			b, err = format.Source(b) // as gofmt writes it
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		r.made[f.Path] = b
		out = append(out, Output{Path: f.Path, Content: b})
	}
	return out, nil
}

// err2text is why a skipped file was not made (its Make is asked again
// for the reason alone: Makes are cheap to refuse).
func err2text(f File, r *Run) string {
	_, err := f.Make(r)
	return err.Error()
}

// Stale lists the outputs that differ from the files under root, each
// with its first difference (or why it cannot be read).
func Stale(root string, outs []Output) []string {
	var stale []string
	for _, o := range outs {
		committed, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(o.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, o.Path+": missing")
		case err != nil:
			stale = append(stale, fmt.Sprintf("%s: %v", o.Path, err))
		case !bytes.Equal(committed, o.Content):
			stale = append(stale, o.Path+": "+refdoc.FirstDifference(committed, o.Content))
		}
	}
	return stale
}

// Write writes the outputs that differ from the files under root, and
// returns their paths.
func Write(root string, outs []Output) ([]string, error) {
	var wrote []string
	for _, o := range outs {
		path := filepath.Join(root, filepath.FromSlash(o.Path))
		if committed, err := os.ReadFile(path); err == nil && bytes.Equal(committed, o.Content) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return wrote, err
		}
		if err := os.WriteFile(path, o.Content, 0o644); err != nil {
			return wrote, err
		}
		wrote = append(wrote, o.Path)
	}
	return wrote, nil
}

func main() {
	if err := run(".", ".", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run generates every file into the tree at root, which must be the
// repository's root, from the code of the tree at src (the root, but in
// tests), and tells w what it wrote and what it skipped.
func run(root, src string, w io.Writer) error {
	if _, err := os.Stat(filepath.Join(root, "spec", "control.json")); err != nil {
		return fmt.Errorf("run it from the repository's root, as %s does: %w", refdoc.Command, err)
	}
	outs, err := generate(root, src, Files)
	if err != nil {
		return err
	}
	for _, o := range outs {
		if o.Skipped != "" {
			fmt.Fprintf(w, "gen: left %s as it is: %s\n", o.Path, o.Skipped)
		}
	}
	wrote, err := Write(root, outs)
	for _, p := range wrote {
		fmt.Fprintln(w, "gen: wrote", p)
	}
	if err == nil && len(wrote) == 0 {
		fmt.Fprintf(w, "gen: %d files up to date\n", len(outs))
	}
	return err
}

// controlDocument is control.json with its fault parts (the kinds, their
// parameters and descriptions, the shorthands' via values, x-fault-kinds)
// made from the kind table, the rest as committed.
func controlDocument(r *Run) ([]byte, error) {
	doc, err := r.Read("spec/control.json")
	if err != nil {
		return nil, err
	}
	return fault.ControlDocument(doc)
}

// faultKinds is the reference page of the fault kinds, made from the
// registry and control.json's descriptions of the targeting.
func faultKinds(r *Run) ([]byte, error) {
	doc, err := r.Read("spec/control.json")
	if err != nil {
		return nil, err
	}
	return fault.Reference(doc)
}

// page makes a file from a function that needs no source but its
// package's own.
func page(render func() []byte) func(*Run) ([]byte, error) {
	return func(*Run) ([]byte, error) { return render(), nil }
}

// fromSource makes a file from a folder of the tree's code (a package's
// sources, the npm or Python package).
func fromSource(dir string, render func(dir string) ([]byte, error)) func(*Run) ([]byte, error) {
	return func(r *Run) ([]byte, error) { return render(filepath.Join(r.src, filepath.FromSlash(dir))) }
}

// needs makes a file only when the command tool is on the PATH; else the
// file is skipped (ErrSkipped).
func needs(tool string, make func(*Run) ([]byte, error)) func(*Run) ([]byte, error) {
	return func(r *Run) ([]byte, error) {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: %s is not installed", ErrSkipped, tool)
		}
		return make(r)
	}
}

// needsFile makes a file only when path (from the tree's root) exists, a
// package installed by its own tool; else the file is skipped.
func needsFile(path string, make func(*Run) ([]byte, error)) func(*Run) ([]byte, error) {
	return func(r *Run) ([]byte, error) {
		if _, err := os.Stat(filepath.Join(r.src, filepath.FromSlash(path))); err != nil {
			return nil, fmt.Errorf("%w: %s is missing (npm ci in its package, or scripts/release)", ErrSkipped, path)
		}
		return make(r)
	}
}

// fromOpenAPI makes a file from openapi.json.
func fromOpenAPI(render func(*contract.Contract) ([]byte, error)) func(*Run) ([]byte, error) {
	return fromDocument("spec/openapi.json", render)
}

// fromControl makes a file from control.json, as this run made it.
func fromControl(render func(*contract.Contract) ([]byte, error)) func(*Run) ([]byte, error) {
	return fromDocument("spec/control.json", render)
}

// fromDocument makes a file from the OpenAPI document at path, checked
// against the OpenAPI rules first.
func fromDocument(path string, render func(*contract.Contract) ([]byte, error)) func(*Run) ([]byte, error) {
	return func(r *Run) ([]byte, error) {
		doc, err := r.Read(path)
		if err != nil {
			return nil, err
		}
		c, err := contract.Parse(filepath.Base(path), doc)
		if err != nil {
			return nil, err
		}
		return render(c)
	}
}
