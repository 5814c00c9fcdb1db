package refdoc

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// pyhelpersScript reads the package's source with Python's ast module (it
// imports nothing of it) and prints its public API as JSON.
//
//go:embed pyhelpers.py
var pyhelpersScript string

// pyItem is one name of the package, as pyhelpers.py prints it.
type pyItem struct {
	Kind      string   `json:"kind"` // function, class, typeddict, fixture, constant
	Name      string   `json:"name"`
	Signature string   `json:"signature"`
	Doc       string   `json:"doc"`
	Scope     string   `json:"scope"` // a fixture's
	Members   []pyItem `json:"members"`
}

// PythonHelpers is the page docs/reference/python-helpers.md: the public
// API of the Python package in dir (packages/python/mediamock), read from
// its source and docstrings with Python's ast module by python3: every name
// of __all__, functions and methods with their signatures (their type
// comments as annotations), classes with their attributes, the pytest
// plugin's fixtures.
func PythonHelpers(dir string) ([]byte, error) {
	cmd := exec.Command("python3", "-c", pyhelpersScript, dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("refdoc: python3 reading %s: %v: %s", dir, err, stderr.String())
	}
	var items []pyItem
	if err := json.Unmarshal(out, &items); err != nil {
		return nil, fmt.Errorf("refdoc: python3 reading %s: %v", dir, err)
	}

	p := New("Python helpers", "the Python package's own source and docstrings (Python's ast)", Command)
	p.Para("The package `mediamock` (`packages/python`, the wheel's), as its docstrings say it: every name it " +
		"exports (`from mediamock import ...`) with its signature, and the fixtures of its pytest plugin. " +
		"[Your first Python test](../tutorials/python.md) shows them at work; " +
		"[`packages/python`](../../packages/python/README.md) tells how they start and stop the server.")
	section := func(title, kind string, header []string, row func(pyItem) []string) {
		var rows [][]string
		for _, it := range items {
			if it.Kind == kind {
				rows = append(rows, row(it))
			}
		}
		if len(rows) > 0 {
			p.Heading(2, title)
			p.Table(header, rows)
		}
	}
	section("Functions", "function", []string{"Function", "What it does"}, func(it pyItem) []string {
		return []string{Code(it.Signature), it.Doc}
	})
	section("Fixtures of the pytest plugin", "fixture", []string{"Fixture", "Scope", "What it gives"}, func(it pyItem) []string {
		return []string{Code(it.Name), it.Scope, it.Doc}
	})
	section("Constants", "constant", []string{"Name", "What it is"}, func(it pyItem) []string {
		return []string{Code(it.Name), it.Doc}
	})
	for _, kind := range []string{"class", "typeddict"} {
		title := "Classes"
		if kind == "typeddict" {
			title = "Typed dictionaries"
		}
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
				head := "Method or attribute"
				if kind == "typeddict" {
					head = "Key"
				}
				p.Table([]string{head, "What it is"}, rows)
			}
		}
	}
	return p.Bytes(), nil
}
