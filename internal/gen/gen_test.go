package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediamock/mediamock/internal/refdoc"
)

// root is the repository's root, from this package.
const root = "../.."

// staleMessage is what the staleness test says: the stale files, each
// with its first difference, and the command that writes them.
func staleMessage(stale []string) string {
	return "generated files are stale: run " + refdoc.Command + " (and review the diff)\n" + strings.Join(stale, "\n")
}

// TestGeneratedFiles is the one staleness test: every generated file is
// made in memory and compared with the committed one; a source changed
// without go generate ./... (a flag, a rule, a fault kind, an operation,
// a tool, a route of control.json) fails here, naming the files.
func TestGeneratedFiles(t *testing.T) {
	outs, err := Generate(root, Files)
	if err != nil {
		t.Fatalf("%v (then run %s)", err, refdoc.Command)
	}
	stale := Stale(root, outs)
	for _, o := range outs {
		if o.Skipped == "" {
			continue
		}
		if os.Getenv("MEDIAMOCK_REFDOC_REQUIRE") == "1" {
			t.Errorf("%s not made (MEDIAMOCK_REFDOC_REQUIRE=1): %s", o.Path, o.Skipped)
		} else {
			t.Logf("%s not held: %s", o.Path, o.Skipped)
		}
	}
	client, err := oapiClient(root)
	switch {
	case errors.Is(err, errNotCached):
		t.Logf("%s not held: %v", oapiClientPath, err)
	case err != nil:
		t.Errorf("%s: %v", oapiClientPath, err)
	default:
		stale = append(stale, Stale(root, []Output{client})...)
	}
	if len(stale) > 0 {
		t.Error(staleMessage(stale))
	}
}

// oapiClientPath is the client oapi-codegen makes, by its own
// //go:generate line.
const oapiClientPath = "contract_test/oapigen/client.gen.go"

// errNotCached is oapi-codegen missing from the module cache.
var errNotCached = errors.New("oapi-codegen is not in the module cache (" + refdoc.Command + " fetches it from the module proxy)")

// oapiClient makes the oapi-codegen client as the //go:generate line of
// contract_test/oapigen does, in a copy of the folder, with the module
// cache as the only module proxy: offline, and errNotCached when the
// version that line names was never fetched.
func oapiClient(root string) (Output, error) {
	dir := filepath.Join(root, filepath.FromSlash(filepath.Dir(oapiClientPath)))
	src, err := os.ReadFile(filepath.Join(dir, "generate.go"))
	if err != nil {
		return Output{}, err
	}
	var args []string
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args = strings.Fields(rest)
		}
	}
	if len(args) < 3 || args[0] != "go" || args[1] != "run" {
		return Output{}, fmt.Errorf("generate.go has no //go:generate go run line: %q", args)
	}
	// The folder's configuration and the document, where the line finds them.
	tree, err := os.MkdirTemp("", "gen-oapi-")
	if err != nil {
		return Output{}, err
	}
	defer os.RemoveAll(tree)
	work := filepath.Join(tree, filepath.FromSlash(filepath.Dir(oapiClientPath)))
	if err := os.MkdirAll(work, 0o755); err != nil {
		return Output{}, err
	}
	for from, to := range map[string]string{
		filepath.Join(dir, "oapi-codegen.yaml"):     filepath.Join(work, "oapi-codegen.yaml"),
		filepath.Join(root, "spec", "openapi.json"): filepath.Join(tree, "openapi.json"),
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			return Output{}, err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return Output{}, err
		}
	}
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return Output{}, err
	}
	proxy := "file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(string(cache)), "cache", "download"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOPROXY="+proxy, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte(proxy)) {
			return Output{}, fmt.Errorf("%w: %s", errNotCached, bytes.TrimSpace(out))
		}
		return Output{}, fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	b, err := os.ReadFile(filepath.Join(work, filepath.Base(oapiClientPath)))
	return Output{Path: oapiClientPath, Content: b}, err
}

// A file is generated once, and every page of docs/reference that says
// go generate ./... writes it is one it writes.
func TestEveryGeneratedPageIsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range Files {
		if listed[f.Path] {
			t.Errorf("%s is generated twice", f.Path)
		}
		listed[f.Path] = true
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "reference", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	says := "by `" + refdoc.Command + "`"
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		path := "docs/reference/" + filepath.Base(p)
		switch {
		case strings.Contains(first, says) && !listed[path]:
			t.Errorf("%s says %s writes it, but the generator has no such file", path, refdoc.Command)
		case listed[path] && !strings.Contains(first, says):
			t.Errorf("%s is generated but its first line does not say %s writes it: %q", path, refdoc.Command, first)
		}
	}
}

// One run makes the same bytes as the next.
func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate(root, Files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(root, Files)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Content, b[i].Content) {
			t.Errorf("%s differs from one run to the next", a[i].Path)
		}
	}
}

// One run reaches the fixed point: from a control.json whose fault parts
// are stale, the run makes the fresh control.json and the pages of the
// fresh one (not of the stale one it read), and a second run writes
// nothing.
func TestOneRunReachesTheFixedPoint(t *testing.T) {
	want, err := Generate(root, Files)
	if err != nil {
		t.Fatal(err)
	}
	control, err := os.ReadFile(filepath.Join(root, "spec", "control.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A kind the table does not have, in FaultSpec's kind enum.
	at := bytes.Index(control, []byte(`"FaultSpec"`))
	enum := bytes.Index(control[at:], []byte(`"enum": [`))
	if at < 0 || enum < 0 {
		t.Fatal("control.json has no FaultSpec with a kind enum")
	}
	cut := at + enum + len(`"enum": [`)
	stale := slices.Concat(control[:cut], []byte(`"made_up_kind", `), control[cut:])

	tree := t.TempDir()
	openapi, err := os.ReadFile(filepath.Join(root, "spec", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tree, "spec"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"openapi.json": openapi, "control.json": stale} {
		if err := os.WriteFile(filepath.Join(tree, "spec", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(tree, root, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, o := range want {
		got, err := os.ReadFile(filepath.Join(tree, filepath.FromSlash(o.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, o.Content) {
			t.Errorf("%s, made from a stale control.json, differs from the one made from the fresh one: %s", o.Path, refdoc.FirstDifference(o.Content, got))
		}
		if bytes.Contains(got, []byte("made_up_kind")) {
			t.Errorf("%s keeps the stale kind", o.Path)
		}
	}
	outs, err := generate(tree, root, Files)
	if err != nil {
		t.Fatal(err)
	}
	if wrote, err := Write(tree, outs); err != nil || len(wrote) > 0 {
		t.Errorf("a second run wrote %v (%v)", wrote, err)
	}
}

// Without oapi-codegen in the module cache, the client is not held (and
// the module proxy is not asked).
func TestOAPIClientNotCached(t *testing.T) {
	t.Setenv("GOMODCACHE", t.TempDir())
	if _, err := oapiClient(root); !errors.Is(err, errNotCached) {
		t.Errorf("with an empty module cache: %v", err)
	}
}

// A generated Go file is written as gofmt writes it; one that does not
// parse fails the run, naming the file.
func TestGeneratedGoIsFormatted(t *testing.T) {
	outs, err := Generate(t.TempDir(), []File{{"x/x.go", func(*Run) ([]byte, error) {
		return []byte("package x\nvar  X =1\n"), nil
	}}})
	if err != nil || string(outs[0].Content) != "package x\n\nvar X = 1\n" {
		t.Errorf("got %q, %v", outs, err)
	}
	_, err = Generate(t.TempDir(), []File{{"x/x.go", func(*Run) ([]byte, error) { return []byte("package x\nvar ="), nil }}})
	if err == nil || !strings.HasPrefix(err.Error(), "x/x.go: ") {
		t.Errorf("a file that does not parse: %v", err)
	}
}

// The generator runs from the repository's root and says so elsewhere.
func TestRunOutsideTheRoot(t *testing.T) {
	dir := t.TempDir()
	err := run(dir, dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), refdoc.Command) {
		t.Errorf("run outside the root: %v", err)
	}
}

// A stale file is named with its first difference, a missing one as
// missing, an up-to-date one not at all; the message names the command.
func TestStaleNamesTheFiles(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"fresh.md": "a\nb\n", "changed.md": "a\nb\n", "grown.md": "a\nb\n"} {
		if err := os.WriteFile(filepath.Join(tree, "docs", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stale := Stale(tree, []Output{
		{Path: "docs/fresh.md", Content: []byte("a\nb\n")},
		{Path: "docs/changed.md", Content: []byte("a\nc\n")},
		{Path: "docs/grown.md", Content: []byte("a\nb\nc\n")},
		{Path: "docs/missing.md", Content: []byte("a\n")},
	})
	want := []string{
		"docs/changed.md: first difference at line 2, column 1:\n  committed: b\n  generated: c",
		"docs/grown.md: first difference at line 3,",
		"docs/missing.md: missing",
	}
	if len(stale) != len(want) {
		t.Fatalf("stale: %q", stale)
	}
	for i, w := range want {
		if !strings.HasPrefix(stale[i], w) {
			t.Errorf("stale[%d] = %q, want it to start with %q", i, stale[i], w)
		}
	}
	if msg := staleMessage(stale); !strings.Contains(msg, "run go generate ./...") || !strings.Contains(msg, "docs/changed.md") {
		t.Errorf("message: %s", msg)
	}
}
