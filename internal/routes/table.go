package routes

import (
	"net/http"
	"strings"
)

// Table is a routing table: it matches a request to the name of an
// operation and its path variables. It holds no server, so a process builds
// each table once and every server dispatches on the name.
//
// Its templates are an OpenAPI document's paths, whose variables are whole
// segments ({id}); it answers as gorilla/mux answered when it routed them
// (its test holds the two together): the first route, in the order added,
// whose template matches the path and whose method is the request's, with
// its variables (any segment but an empty one); else, on a path some
// template matches, the methods of the first such template.
type Table struct {
	prefix  string
	routes  []route
	allowed map[string][]string
	paths   []string
	// exact holds, for each path without variables, what the table
	// answers for it, method by method: most requests match no template
	// with a variable.
	exact map[string]*exactPath
}

type exactPath struct {
	byMethod map[string]Match
	other    Match // any other method
}

// A route is a template and what matching it means.
type route struct {
	method   string // "" for any method (a path's other methods)
	name     string
	segments []string // the template after the prefix, split at each /
	vars     []string // by segment: the variable's name, "" for a literal
}

// New starts a table of the paths under prefix.
func New(prefix string) *Table {
	return &Table{prefix: prefix, allowed: map[string][]string{}}
}

// Add routes method and path (an OpenAPI path template) to the name.
func (t *Table) Add(method, path, name string) {
	t.routes = append(t.routes, newRoute(method, path, name))
	if t.allowed[path] == nil {
		t.paths = append(t.paths, path)
	}
	t.allowed[path] = append(t.allowed[path], method)
}

func newRoute(method, path, name string) route {
	r := route{method: method, name: name, segments: strings.Split(path, "/")}
	r.vars = make([]string, len(r.segments))
	for i, s := range r.segments {
		if len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' {
			r.vars[i] = s[1 : len(s)-1]
		}
	}
	return r
}

// Seal ends the table: other methods on a known path match with the list
// of the methods allowed there.
func (t *Table) Seal() *Table {
	for _, p := range t.paths {
		t.routes = append(t.routes, newRoute("", p, notAllowed+strings.Join(t.allowed[p], ", ")))
	}
	t.exact = map[string]*exactPath{}
	for _, p := range t.paths {
		if strings.Contains(p, "{") {
			continue
		}
		// The table's own answers, asked once: the same whatever
		// templates overlap.
		path := t.prefix + p
		e := &exactPath{byMethod: map[string]Match{}, other: t.route("MOCK-OTHER", path)}
		for _, m := range t.allowed[p] {
			e.byMethod[m] = t.route(m, path)
		}
		t.exact[path] = e
	}
	return t
}

const notAllowed = "\x00"

// Match is what a table found for a request.
type Match struct {
	// Name is the operation's name; "" when nothing matched.
	Name string
	Vars map[string]string
	// Allow lists the methods of a known path when the method is not one
	// of them.
	Allow string
}

// Match finds the operation of a request.
func (t *Table) Match(r *http.Request) Match { return t.MatchPath(r.Method, r.URL.Path) }

// MatchPath finds the operation of method at path (a request's URL.Path:
// decoded).
func (t *Table) MatchPath(method, path string) Match {
	if e, ok := t.exact[path]; ok {
		if m, ok := e.byMethod[method]; ok {
			return m
		}
		return e.other
	}
	return t.route(method, path)
}

// route finds the first route of the method whose template matches the
// path, else the first route of any method (Seal's) that does.
func (t *Table) route(method, path string) Match {
	rest, ok := strings.CutPrefix(path, t.prefix)
	if !ok {
		return Match{}
	}
	segments := strings.Split(rest, "/")
	for _, r := range t.routes {
		if (r.method != "" && r.method != method) || !r.matches(segments) {
			continue
		}
		if allow, ok := strings.CutPrefix(r.name, notAllowed); ok {
			return Match{Allow: allow}
		}
		var vars map[string]string
		for i, v := range r.vars {
			if v != "" {
				if vars == nil {
					vars = map[string]string{}
				}
				vars[v] = segments[i]
			}
		}
		return Match{Name: r.name, Vars: vars}
	}
	return Match{}
}

// matches reports whether the path's segments fit the template's: a
// literal as it stands, a variable any segment but an empty one.
func (r *route) matches(segments []string) bool {
	if len(segments) != len(r.segments) {
		return false
	}
	for i, s := range segments {
		if r.vars[i] != "" {
			if s == "" {
				return false
			}
		} else if s != r.segments[i] {
			return false
		}
	}
	return true
}
