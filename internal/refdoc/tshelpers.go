package refdoc

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// tshelpersScript reads the npm package's TypeScript sources with the
// TypeScript compiler's parser (its own devDependency) and prints its
// public API as JSON.
//
//go:embed tshelpers.js
var tshelpersScript string

// tsItem is one export of the package, as tshelpers.js prints it.
type tsItem struct {
	Kind      string `json:"kind"` // function, constant, class, interface, type
	Name      string `json:"name"`
	Signature string `json:"signature"`
	Doc       string `json:"doc"`
	Members   []struct {
		Signature string `json:"signature"`
		Doc       string `json:"doc"`
	} `json:"members"`
}

// TypeScriptHelpers is the page docs/reference/typescript-helpers.md: the
// public API of the npm package @mediamock/server in dir
// (packages/npm/server), read by node from its TypeScript sources with the
// compiler's parser (dir/node_modules/typescript, which `npm ci` there
// installs; scripts/release runs it): every name src/index.ts exports,
// with its declaration as written and the first sentence of its doc
// comment, the members of its classes and interfaces.
func TypeScriptHelpers(dir string) ([]byte, error) {
	cmd := exec.Command("node", "-e", tshelpersScript, dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("refdoc: node reading %s: %v: %s", dir, err, stderr.String())
	}
	var items []tsItem
	if err := json.Unmarshal(out, &items); err != nil {
		return nil, fmt.Errorf("refdoc: node reading %s: %v", dir, err)
	}

	p := New("TypeScript helpers", "the npm package's own TypeScript sources and doc comments", Command)
	p.Para("The package `@mediamock/server` (`packages/npm/server`), as its sources declare it: every name it " +
		"exports, with its declaration and the first sentence of its doc comment. Requests and answers are typed " +
		"from `openapi.json` and `control.json` (`ApiPaths`, `ApiSchemas`, `ControlPaths`, `ControlSchemas`). " +
		"[Your first TypeScript test](../tutorials/typescript.md) shows them at work; " +
		"[`packages/npm/server`](../../packages/npm/server/README.md) tells how they start and stop the server.")
	flat := func(title, kind, head string) {
		var rows [][]string
		for _, it := range items {
			if it.Kind == kind {
				rows = append(rows, []string{Code(it.Signature), it.Doc})
			}
		}
		if len(rows) > 0 {
			p.Heading(2, title)
			p.Table([]string{head, "What it is"}, rows)
		}
	}
	flat("Functions", "function", "Function")
	flat("Constants", "constant", "Constant")
	for _, kind := range []string{"class", "interface"} {
		title := map[string]string{"class": "Classes", "interface": "Interfaces"}[kind]
		first := true
		for _, it := range items {
			if it.Kind != kind {
				continue
			}
			if first {
				p.Heading(2, title)
				first = false
			}
			p.Heading(3, it.Name)
			p.Para(Code(it.Signature) + ": " + it.Doc)
			var rows [][]string
			for _, m := range it.Members {
				rows = append(rows, []string{Code(m.Signature), m.Doc})
			}
			if len(rows) > 0 {
				p.Table([]string{"Member", "What it is"}, rows)
			}
		}
	}
	flat("Types", "type", "Type")
	return p.Bytes(), nil
}
