package routes

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/mediamock/mediamock/spec"
)

// TestTableAnswersAsTheRouter compares the table's answers for paths
// without variables (kept per method) with the router's own.
func TestTableAnswersAsTheRouter(t *testing.T) {
	tb := New("/api")
	tb.Add("GET", "/things", "listThings")
	tb.Add("POST", "/things", "createThing")
	tb.Add("GET", "/things/{id}", "getThing")
	tb.Add("GET", "/{kind}/special", "byKind")
	tb.Add("GET", "/x/special", "special")
	tb.Seal()
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/things"}, {"POST", "/api/things"}, {"DELETE", "/api/things"}, {"HEAD", "/api/things"},
		{"GET", "/api/things/7"}, {"GET", "/api/x/special"}, {"PUT", "/api/x/special"}, {"GET", "/api/y/special"},
		{"GET", "/api/things/"}, {"GET", "/api//things"}, {"GET", "/nope"},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		got, want := tb.Match(r), tb.route(r.Method, r.URL.Path)
		if got.Name != want.Name || got.Allow != want.Allow || len(got.Vars) != len(want.Vars) {
			t.Errorf("%s %s: table %+v, router %+v", c.method, c.path, got, want)
		}
	}
	if m := tb.Match(httptest.NewRequest("GET", "/api/x/special", nil)); m.Name != "byKind" {
		t.Errorf("an earlier route with a variable wins, as in the router: %+v", m)
	}
	if m := tb.Match(httptest.NewRequest("DELETE", "/api/things", nil)); m.Allow != "GET, POST" {
		t.Errorf("other methods: %+v", m)
	}
}

// muxTable is the table as gorilla/mux made it before the table matched
// templates itself: the oracle the table is held to.
type muxTable struct{ router *mux.Router }

func newMuxTable(prefix string, rs []Route) *muxTable {
	r := mux.NewRouter().SkipClean(true)
	sub := r.PathPrefix(prefix).Subrouter()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range rs {
		sub.Handle(rt.Path, http.NotFoundHandler()).Methods(rt.Method).Name(rt.ID)
		if allowed[rt.Path] == nil {
			paths = append(paths, rt.Path)
		}
		allowed[rt.Path] = append(allowed[rt.Path], rt.Method)
	}
	for _, p := range paths {
		sub.Handle(p, http.NotFoundHandler()).Name(notAllowed + strings.Join(allowed[p], ", "))
	}
	return &muxTable{router: r}
}

func (mt *muxTable) match(method, path string) Match {
	var m mux.RouteMatch
	if !mt.router.Match(&http.Request{Method: method, URL: &url.URL{Path: path}}, &m) || m.Route == nil {
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

// The table answers every request as gorilla/mux did, on the routes of
// both documents and of a table whose templates overlap: each template
// with its variables filled in several ways, and the same paths bent
// (a slash more or less, a segment more or less, an empty variable, the
// prefix alone or misspelt), by every method.
func TestTableIsTheRouter(t *testing.T) {
	service, err := Read(spec.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	control, err := Read(spec.Control)
	if err != nil {
		t.Fatal(err)
	}
	overlapping := []Route{{"GET", "/things", "listThings"}, {"POST", "/things", "createThing"}, {"GET", "/things/{id}", "getThing"},
		{"GET", "/{kind}/special", "byKind"}, {"GET", "/x/special", "special"}, {"DELETE", "/x/special", "deleteSpecial"},
		{"GET", "/{a}/{b}", "pair"}, {"PUT", "/things/{id}", "putThing"}, {"GET", "/", "root"}, {"GET", "/things/", "slashed"}}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "MOCK-OTHER", "get"}
	for _, c := range []struct {
		prefix string
		rs     []Route
	}{{"/api/v1", service}, {"/_mock", control}, {"/api", overlapping}, {"", overlapping}} {
		tb := TableOf(c.prefix, c.rs)
		oracle := newMuxTable(c.prefix, c.rs)
		paths := map[string]bool{c.prefix: true, c.prefix + "/": true, c.prefix + "x": true, "/": true, "": true, "/nope": true}
		for _, r := range c.rs {
			for _, fill := range []string{"x", "7", "a.b", "a b", "%2F", "a/b", "", "{id}"} {
				p := c.prefix + r.Path
				for {
					i, j := strings.Index(p, "{"), strings.Index(p, "}")
					if i < 0 || j < i || fill == "{id}" {
						break
					}
					p = p[:i] + fill + p[j+1:]
				}
				for _, q := range []string{p, p + "/", p + "//", strings.TrimSuffix(p, "/"), p + "/more", "/" + p, strings.Replace(p, "/", "//", 1),
					p[:strings.LastIndex(p, "/")+1], p[:max(strings.LastIndex(p, "/"), 0)], strings.ToUpper(p)} {
					paths[q] = true
				}
			}
		}
		checked := 0
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			for _, m := range methods {
				got, want := tb.MatchPath(m, p), oracle.match(m, p)
				if got.Name != want.Name || got.Allow != want.Allow || !maps.Equal(got.Vars, want.Vars) || (got.Vars == nil) != (want.Vars == nil) {
					t.Errorf("%q: %s %q: table %+v, gorilla/mux %+v", c.prefix, m, p, got, want)
				}
				checked++
			}
		}
		if checked < 100 {
			t.Errorf("%q: only %d requests checked", c.prefix, checked)
		}
	}
}
