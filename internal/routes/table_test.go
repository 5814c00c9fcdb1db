package routes

import (
	"net/http/httptest"
	"testing"
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
		got, want := tb.Match(r), tb.route(r)
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
