package mediamock_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// Every fenced code block of the README and of docs/ is run, or says why
// not. The comment just before a fence says how:
//
//	<!-- not-run: why, and where else it is covered -->  never run
//	<!-- run: clock=real speed=1000 evolve -->           a shell block's server
//	<!-- go: TestName -->                                a Go block: the body of that test
//	<!-- go-file: path/to/file_test.go -->               a Go block: that whole file
//	<!-- step: JOURNEY [file=PATH] -->                   a step of a user's journey
//
// A journey is what a page teaches a new user to do, in order: its shell
// steps are run as written, and a block with file=PATH is saved as that
// file first (a test, a tsconfig.json, a containers.conf). The scripts that
// have what a journey needs (a container engine, the packed packages) run
// it from the page's text: TestDocsJourneys writes each one out as a bash
// script (MEDIAMOCK_DOCS_JOURNEYS), scripts/container-e2e runs the
// container-* journeys, scripts/testcontainers-check the testcontainers-*
// ones, scripts/packages-check the first tests of the tutorials.
//
// Shell blocks (sh, bash, console) run here with bash and `set -euo
// pipefail`, each against a server of its own on a free loopback port,
// written http://127.0.0.1:8080 in the text. Go blocks are the text of a
// test of the repository, which go test compiles and runs. TypeScript and
// Python blocks are complete test files: scripts/examples-check writes
// them out with MEDIAMOCK_DOCS_EXAMPLES (TestDocsExamplesExtract) and runs
// them with node --test and pytest. json, yaml, text and unmarked fences
// are configuration or output, not run.

type docBlock struct {
	file   string
	line   int    // of the opening fence
	lang   string // the fence's info string
	marker string // not-run, run, go, go-file or ""
	arg    string // the marker's text
	text   string
}

var markerRE = regexp.MustCompile(`^<!-- (not-run|run|go|go-file|step): (.*?) -->$`)

// docBlocks returns the fenced blocks of a markdown file with the marker
// on the last line before each fence (blank lines between are allowed).
func docBlocks(file, text string) []docBlock {
	var out []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{file: file, line: i + 1, lang: m[2]}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if mm := markerRE.FindStringSubmatch(strings.TrimSpace(lines[j])); mm != nil {
				b.marker, b.arg = mm[1], mm[2]
			}
			break
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var body []string
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimSpace(lines[i]), m[1]) && strings.Trim(strings.TrimSpace(lines[i]), m[1][:1]) == "" {
				break
			}
			l := lines[i]
			for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
				l = l[1:]
			}
			body = append(body, l)
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// exampleBlocks are the blocks of the README and of every page of docs/.
func exampleBlocks(t *testing.T) []docBlock {
	t.Helper()
	var out []docBlock
	for _, file := range append([]string{"README.md"}, docPages(t)...) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		out = append(out, docBlocks(file, string(data))...)
	}
	return out
}

func (b docBlock) String() string { return b.file + ":" + strconv.Itoa(b.line) }

var (
	shellLangs  = map[string]bool{"sh": true, "bash": true, "console": true, "shell": true}
	scriptLangs = map[string]bool{"ts": true, "typescript": true, "python": true, "py": true}
	dataLangs   = map[string]bool{"": true, "json": true, "yaml": true, "yml": true, "text": true}
)

// TestDocsExamplesMarked: every block is one this harness runs, or is
// marked not-run with a reason; markers fit their blocks.
func TestDocsExamplesMarked(t *testing.T) {
	blocks := exampleBlocks(t)
	require.Greater(t, len(blocks), 40)
	counts := map[string]int{}
	for _, b := range blocks {
		switch {
		case b.marker == "not-run":
			assert.Greater(t, len(b.arg), 10, "%s: not-run says why", b)
			counts["not-run"]++
		case b.marker == "step":
			_, file, err := parseStep(b.arg)
			assert.NoError(t, err, "%s", b)
			if file == "" {
				assert.True(t, shellLangs[b.lang], "%s: a step without file= is a shell block", b)
			}
			counts["step"]++
		case dataLangs[b.lang]:
			assert.Empty(t, b.marker, "%s: a %q block is not run", b, b.lang)
			counts["data"]++
		case shellLangs[b.lang]:
			assert.Contains(t, []string{"", "run"}, b.marker, "%s", b)
			counts["shell"]++
		case b.lang == "go":
			assert.Contains(t, []string{"go", "go-file"}, b.marker, "%s: a Go block names the test that runs it (<!-- go: TestName -->), or is not-run", b)
			counts["go"]++
		case scriptLangs[b.lang]:
			assert.Empty(t, b.marker, "%s", b)
			counts["script"]++
		default:
			t.Errorf("%s: a block of language %q, which nothing runs: mark it <!-- not-run: why -->", b, b.lang)
		}
	}
	t.Logf("blocks: %v", counts)
	assert.Positive(t, counts["shell"])
	assert.Positive(t, counts["go"])
	assert.Positive(t, counts["script"])
	assert.Positive(t, counts["step"])

	// The parser: a marker, an indented fence, a fence inside a longer one.
	bs := docBlocks("x.md", "<!-- not-run: a reason here -->\n\n```sh\nls\n```\n1. step\n   ```go\n   x := 1\n   ```\n````md\n```sh\n````\n")
	require.Len(t, bs, 3)
	assert.Equal(t, docBlock{file: "x.md", line: 3, lang: "sh", marker: "not-run", arg: "a reason here", text: "ls\n"}, bs[0])
	assert.Equal(t, "x := 1\n", bs[1].text)
	assert.Equal(t, "```sh\n", bs[2].text)
}

// goTestBodies returns the bodies of the functions of the repository's
// root test files, each as written (one tab of indentation removed).
func goTestBodies(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]string{}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	for _, path := range files {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, path, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			var lines []string
			for _, l := range strings.Split(strings.Trim(body, "\n"), "\n") {
				lines = append(lines, strings.TrimPrefix(l, "\t"))
			}
			out[fn.Name.Name] = strings.Join(lines, "\n") + "\n"
		}
	}
	return out
}

// TestDocsExamplesGo: a Go block is the body of the test it names (which
// go test runs), or the whole file it names.
func TestDocsExamplesGo(t *testing.T) {
	bodies := goTestBodies(t, ".")
	for _, b := range exampleBlocks(t) {
		switch b.marker {
		case "go":
			body, ok := bodies[b.arg]
			if assert.True(t, ok, "%s: no function %s in the root package's tests", b, b.arg) {
				assert.Equal(t, body, b.text, "%s: the block is the body of %s", b, b.arg)
			}
		case "go-file":
			data, err := os.ReadFile(b.arg)
			if assert.NoError(t, err, "%s", b) {
				assert.Equal(t, string(data), b.text, "%s: the block is %s", b, b.arg)
			}
		}
	}
}

// TestDocsExamplesShell runs every shell block against a server of its own.
func TestDocsExamplesShell(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the documentation's shell examples need bash, curl and jq", tool)
		}
	}
	for _, b := range exampleBlocks(t) {
		if !shellLangs[b.lang] || b.marker == "not-run" || b.marker == "step" { // a step runs in its journey
			continue
		}
		t.Run(strings.ReplaceAll(b.String(), "/", "_"), func(t *testing.T) {
			t.Parallel()
			runShellBlock(t, b)
		})
	}
}

func runShellBlock(t *testing.T, b docBlock) {
	o := mediamock.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, kv := range strings.Fields(b.arg) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "clock":
			o.Clock = mediamock.ClockMode(v)
		case "evolve":
			o.Evolve = true
		case "speed":
			s, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, "%s: speed", b)
			o.Speed = s
		default:
			t.Fatalf("%s: unknown run option %q", b, kv)
		}
	}
	srv, err := mediamock.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })

	script := "set -euo pipefail\n" + strings.ReplaceAll(b.text, "http://127.0.0.1:8080", srv.URL())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second // a child that keeps the output open
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n--- the block, as run:\n%s\n--- its output:\n%s", b, err, script, out)
	}
}

// TestDocsExamplesExtract writes the TypeScript and Python blocks to the
// folder MEDIAMOCK_DOCS_EXAMPLES names (scripts/examples-check runs them),
// as doc_<page>_<line>.test.ts and test_doc_<page>_<line>.py. Without the
// variable it checks that each block is a test file of its own.
func TestDocsExamplesExtract(t *testing.T) {
	dir := os.Getenv("MEDIAMOCK_DOCS_EXAMPLES")
	n := 0
	for _, b := range exampleBlocks(t) {
		if !scriptLangs[b.lang] || b.marker == "not-run" {
			continue
		}
		n++
		name := regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(strings.TrimSuffix(b.file, ".md")), "_") + "_" + strconv.Itoa(b.line)
		var file string
		switch b.lang {
		case "ts", "typescript":
			assert.Contains(t, b.text, `from "node:test"`, "%s: a test file of its own, for node --test", b)
			file = "doc_" + name + ".test.ts"
		default:
			assert.Regexp(t, `(?m)^def test_`, b.text, "%s: a test module of its own, for pytest", b)
			file = "test_doc_" + name + ".py"
		}
		if dir != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(b.text), 0o644))
		}
	}
	assert.Positive(t, n)
}

// stepArgRE: JOURNEY [file=PATH], a journey's name in lower case and a
// relative path without "..".
var stepArgRE = regexp.MustCompile(`^([a-z][a-z0-9-]*)(?: file=([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*))?$`)

// parseStep reads a step marker's argument.
func parseStep(arg string) (journey, file string, err error) {
	m := stepArgRE.FindStringSubmatch(arg)
	if m == nil || strings.Contains(m[2], "..") {
		return "", "", fmt.Errorf("a step marker is <!-- step: JOURNEY [file=RELATIVE/PATH] -->, not %q", arg)
	}
	return m[1], m[2], nil
}

// journeyScript is a journey as one bash script: each step in the page's
// order, a file step written with a quoted here-document (nothing in it is
// expanded), a shell step as written.
func journeyScript(name string, steps []docBlock) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "#!/usr/bin/env bash\n# The journey %q of %s, step by step (TestDocsJourneys wrote it from the page).\nset -euo pipefail\n", name, steps[0].file)
	for _, b := range steps {
		_, file, _ := parseStep(b.arg)
		fmt.Fprintf(&sb, "\n# ---- %s\n", b)
		if file == "" {
			fmt.Fprintf(&sb, "echo '+ step %s'\n%s", b, b.text)
			continue
		}
		if dir := filepath.Dir(file); dir != "." {
			fmt.Fprintf(&sb, "mkdir -p %s\n", dir)
		}
		fmt.Fprintf(&sb, "echo '+ file %s (%s)'\ncat > %s <<'MEDIAMOCK_DOC_EOF'\n%sMEDIAMOCK_DOC_EOF\n", file, b, file, b.text)
	}
	return sb.String()
}

// journeys are the step blocks by journey, each in its page's order.
func journeys(t *testing.T) (map[string][]docBlock, []string) {
	t.Helper()
	out := map[string][]docBlock{}
	var names []string
	for _, b := range exampleBlocks(t) {
		if b.marker != "step" {
			continue
		}
		name, _, err := parseStep(b.arg)
		require.NoError(t, err, "%s", b)
		if _, ok := out[name]; !ok {
			names = append(names, name)
		}
		out[name] = append(out[name], b)
	}
	return out, names
}

// TestDocsJourneys writes every journey to the folder
// MEDIAMOCK_DOCS_JOURNEYS names, as NAME.sh; without the variable it
// checks them: a journey lives on one page, runs at least one shell step,
// and names each file once; the journeys the scripts run are there.
func TestDocsJourneys(t *testing.T) {
	all, names := journeys(t)
	for _, name := range names {
		steps := all[name]
		shell, files := 0, map[string]bool{}
		for _, b := range steps {
			assert.Equal(t, steps[0].file, b.file, "%s: the journey %q lives on one page (it began on %s)", b, name, steps[0])
			_, file, _ := parseStep(b.arg)
			if file == "" {
				shell++
				assert.NotContains(t, b.text, "MEDIAMOCK_DOC_EOF", "%s", b)
				continue
			}
			assert.False(t, files[file], "%s: the journey %q writes %s twice", b, name, file)
			files[file] = true
			assert.NotContains(t, b.text, "\nMEDIAMOCK_DOC_EOF\n", "%s", b)
		}
		assert.Positive(t, shell, "the journey %q runs no shell step", name)
		if dir := os.Getenv("MEDIAMOCK_DOCS_JOURNEYS"); dir != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name+".sh"), []byte(journeyScript(name, steps)), 0o755))
		}
	}
	// The journeys that scripts/container-e2e, scripts/testcontainers-check
	// and scripts/packages-check run by name.
	for _, name := range []string{"container-readme-docker", "container-readme-podman", "container-install-docker", "container-install-podman",
		"container-ci", "podman-runc", "testcontainers-image", "testcontainers-go", "testcontainers-node", "first-test-typescript", "first-test-python"} {
		assert.Contains(t, names, name, "the journey %q, which a script runs", name)
	}

	// A script as written: a file step, then a shell step that reads it.
	dir := t.TempDir()
	steps := []docBlock{
		{file: "x.md", line: 3, marker: "step", arg: "demo file=sub/a.txt", text: "$HOME `x` 'y'\n"},
		{file: "x.md", line: 9, marker: "step", arg: "demo", text: "cat sub/a.txt > out.txt\n"},
	}
	cmd := exec.Command("bash", "-c", journeyScript("demo", steps))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "$HOME `x` 'y'\n", string(data), "a file step is written as it is")
	for _, bad := range []string{"demo file=../x", "Demo", "demo file=/etc/x", "demo extra"} {
		_, _, err := parseStep(bad)
		assert.Error(t, err, bad)
	}
}
