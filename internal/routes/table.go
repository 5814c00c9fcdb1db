package routes

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"
)

// Table is a routing table: it matches a request to the name of an
// operation and its path variables. It holds no server, so a process builds
// each table once and every server dispatches on the name.
type Table struct {
	router  *mux.Router
	prefix  string
	allowed map[string][]string
	paths   []string
	// exact holds, for each path without variables, what the router
	// answers for it, method by method: most requests skip the router's
	// regular expressions.
	exact map[string]*exactPath
}

type exactPath struct {
	byMethod map[string]Match
	other    Match // any other method
}

// New starts a table of the paths under prefix.
func New(prefix string) *Table {
	// Paths are matched as sent: //assets is not quietly redirected to /assets.
	r := mux.NewRouter().SkipClean(true)
	return &Table{router: r.PathPrefix(prefix).Subrouter(), prefix: prefix, allowed: map[string][]string{}}
}

var matched = http.NotFoundHandler() // a route needs a handler to match

// Add routes method and path (a gorilla/mux template) to the name.
func (t *Table) Add(method, path, name string) {
	t.router.Handle(path, matched).Methods(method).Name(name)
	if t.allowed[path] == nil {
		t.paths = append(t.paths, path)
	}
	t.allowed[path] = append(t.allowed[path], method)
}

// Seal ends the table: other methods on a known path match with the list
// of the methods allowed there.
func (t *Table) Seal() *Table {
	for _, p := range t.paths {
		t.router.Handle(p, matched).Name(notAllowed + strings.Join(t.allowed[p], ", "))
	}
	t.exact = map[string]*exactPath{}
	for _, p := range t.paths {
		if strings.Contains(p, "{") {
			continue
		}
		// The router's own answers, asked once: the table answers the
		// same whatever routes overlap.
		path := t.prefix + p
		e := &exactPath{byMethod: map[string]Match{}, other: t.route(&http.Request{Method: "MOCK-OTHER", URL: &url.URL{Path: path}})}
		for _, m := range t.allowed[p] {
			e.byMethod[m] = t.route(&http.Request{Method: m, URL: &url.URL{Path: path}})
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
	return t.route(&http.Request{Method: method, URL: &url.URL{Path: path}})
}

// route asks the router.
func (t *Table) route(r *http.Request) Match {
	var m mux.RouteMatch
	if !t.router.Match(r, &m) || m.Route == nil {
		return Match{}
	}
	name := m.Route.GetName()
	if allow, ok := strings.CutPrefix(name, notAllowed); ok {
		return Match{Allow: allow}
	}
	if len(m.Vars) == 0 {
		return Match{Name: name}
	}
	return Match{Name: name, Vars: m.Vars}
}
