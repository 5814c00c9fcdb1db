package refdoc

import (
	"strings"
	"testing"
)

// TestGoAPIReference holds docs/reference/go-api.md to the root package's
// doc comments (GoAPI).
func TestGoAPIReference(t *testing.T) {
	page, err := GoAPI("../..")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	// What a reader looks for: a method's result types, a constructor, an
	// option, a field, an alias; and nothing of the tests.
	for _, want := range []string{
		"| `func (s *Server) Balance(workspaceID uint64) (int64, error)` |",
		"| `func New(o Options) (*Server, error)` |",
		"| `func RunT(t TB, opts ...Option) *Server` |",
		"| `func WithSeed(seed uint64) Option` |",
		"### Options",
		"`type FaultSpec = controlapi.FaultSpec`",
		"| `KeyAllScopes` |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, unwanted := range []string{"TestReadmeQuickStart", "func Example"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("the page shows %q, from a test file", unwanted)
		}
	}
}
