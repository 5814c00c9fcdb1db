package mediamock_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The import rules of the house (docs/explanation/architecture.md, "The
// map of the house"), held against what the go command says the packages
// import. A rule is about every package a package reaches through its
// imports (not its tests'), so a front that reaches another through a third
// package breaks it too.

const module = "github.com/mediamock/mediamock"

// fronts are the packages of a way in. internal/router makes them, and may
// import them; no front reaches another.
var fronts = []string{"internal/rest", "internal/mcp", "internal/control", "internal/dashboard", "internal/oauth", "internal/proxy"}

// importRule forbids a package to reach any of not.
type importRule struct {
	from string
	not  []string
	why  string
}

func importRules() []importRule {
	var rules []importRule
	for _, f := range fronts {
		rules = append(rules, importRule{f, slices.DeleteFunc(slices.Clone(fronts), func(o string) bool { return o == f }),
			"no front imports another: what two fronts share lives in a package of the control plane"})
	}
	return append(rules,
		importRule{"internal/ops", append([]string{"internal/edge"}, fronts...),
			"the operation pipeline is transport-free: it imports no front, and not the edge"},
		importRule{"internal/controlplane", append([]string{"internal/edge", "internal/router"}, fronts...),
			"the control plane is what every way in calls: it imports no front, and not the edge"},
		importRule{"internal/edge", append([]string{"internal/controlplane", "internal/ops", "internal/router"}, fronts...),
			"the edge is what every request passes below the fronts: it knows none of them, nor what they call"},
		importRule{"internal/parking", append([]string{"internal/edge", "sim"}, fronts...),
			"the parking of long polls is machinery of HTTP alone, beside the edge's plain fallback"},
		importRule{"internal/report", []string{"conformance"},
			"the client report is the server's: the public conformance suite is a client of the server"},
		importRule{"sim", []string{"net/http"},
			"the engine never imports net/http"},
		importRule{"internal/testkit", append([]string{".", "internal/edge", "internal/router"}, fronts...),
			"the tests of the packages the root imports use the test helpers too: they reach a server by its address and client"},
	)
}

// knownBreaches are the imports against a rule that are allowed for now.
// Each must go: when one no longer happens the test fails until it is
// removed from here, so that the rule holds from then on.
var knownBreaches = map[[2]string]string{}

// goList is every package the module's packages reach, with its imports.
func goList(t *testing.T) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import rules are read from the go command, which is not on PATH: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Imports", "./...")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		imports[p.ImportPath] = p.Imports
	}
	return imports
}

// path is the chain of imports by which from reaches to, or nil when it
// does not.
func path(imports map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			chain := []string{p}
			for p != from {
				p = prev[p]
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}

// full is a package's import path: the module's packages are named
// relative to the module ("." is the root), the standard library's as they
// are.
func full(imports map[string][]string, p string) string {
	if p == "." {
		return module
	}
	if _, ok := imports[module+"/"+p]; ok {
		return module + "/" + p
	}
	return p
}

func short(chain []string) string {
	for i, p := range chain {
		chain[i] = strings.TrimPrefix(p, module+"/")
	}
	return strings.Join(chain, " → ")
}

func TestImportRules(t *testing.T) {
	imports := goList(t)
	breached := map[[2]string]bool{}
	for _, r := range importRules() {
		if _, ok := imports[module+"/"+r.from]; !ok {
			t.Errorf("the rule for %s names a package the module does not have", r.from)
			continue
		}
		for _, not := range r.not {
			chain := path(imports, full(imports, r.from), full(imports, not))
			if chain == nil {
				continue
			}
			k := [2]string{r.from, not}
			if _, known := knownBreaches[k]; known {
				breached[k] = true
				continue
			}
			t.Errorf("%s reaches %s (%s): %s", r.from, not, short(chain), r.why)
		}
	}
	for k, why := range knownBreaches {
		if !breached[k] {
			t.Errorf("%s no longer reaches %s (%s): remove it from knownBreaches, so that the rule holds from now on", k[0], k[1], why)
		}
	}
}

// The rules are checked against something: the chain of a package the
// module really has, and a rule broken on purpose is found.
func TestImportRulesFindABreach(t *testing.T) {
	imports := goList(t)
	chain := path(imports, full(imports, "internal/router"), full(imports, "internal/oauth"))
	if chain == nil {
		t.Fatal("internal/router makes the fronts, so it reaches internal/oauth: the import graph is not read")
	}
	if got := short(chain); got != "internal/router → internal/oauth" {
		t.Errorf("the chain from the router to oauth is %s", got)
	}
	if path(imports, full(imports, "sim"), "fmt") == nil {
		t.Error("sim reaches fmt, and the rules do not see it")
	}
	if c := path(imports, full(imports, "internal/seed"), full(imports, "sim")); c != nil {
		t.Errorf("internal/seed reaches sim? %s", fmt.Sprint(c))
	}
}
