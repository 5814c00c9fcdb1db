package dashboard_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// pageKind is what the page's rule form offers for a kind of fault.
type pageKind struct {
	params, targets []string // targets: nil for every one
}

// jsList reads a list of JavaScript strings: 'a', 'b'.
func jsList(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// pageKinds reads the kinds of fault rules the served app.js offers
// (RULE_KINDS), and latency's distributions (DISTRIBUTIONS).
func pageKinds(t *testing.T, js string) (map[string]pageKind, map[string][]string) {
	t.Helper()
	kinds := map[string]pageKind{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(\w+): \{ params: \[([^\]]*)\](?:, targets: \[([^\]]*)\])?`).FindAllStringSubmatch(js, -1) {
		kinds[m[1]] = pageKind{params: jsList(m[2]), targets: jsList(m[3])}
	}
	line := regexp.MustCompile(`const DISTRIBUTIONS = \{([^}]*)\}`).FindStringSubmatch(js)
	require.NotNil(t, line, "app.js lists the distributions")
	dists := map[string][]string{}
	for _, m := range regexp.MustCompile(`(\w+): \[([^\]]*)\]`).FindAllStringSubmatch(line[1], -1) {
		dists[m[1]] = jsList(m[2])
	}
	return kinds, dists
}

// The fault rule form offers what the server takes: every kind of
// control.json's FaultSpec, an input for each of its fields, and for each
// kind the parameters the server accepts of it and no other; the targeting
// it hides is what the server refuses of the kind.
func TestDashboardFaultRuleFormMatchesTheServer(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, js := get(t, srv, "GET", "/_mock/ui/app.js")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, page := get(t, srv, "GET", "/_mock/ui/")
	kinds, dists := pageKinds(t, js)

	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []any `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(mediamock.ControlDocument, &doc))
	spec := doc.Components.Schemas["FaultSpec"].Properties
	var enum []string
	for _, k := range spec["kind"].Enum {
		enum = append(enum, k.(string))
	}
	assert.ElementsMatch(t, enum, slices.Collect(maps.Keys(kinds)), "the page offers every kind, and no other")
	form := page[strings.Index(page, `<form id="fault-rule"`):]
	form = form[:strings.Index(form, `</form>`)]
	var names []string
	for _, m := range regexp.MustCompile(`<(?:input|select) name="(\w+)"`).FindAllStringSubmatch(form, -1) {
		names = append(names, m[1])
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(spec)), names, "an input for each field of a FaultSpec")
	var distEnum []string
	for _, d := range spec["distribution"].Enum {
		distEnum = append(distEnum, d.(string))
	}
	assert.ElementsMatch(t, distEnum, slices.Collect(maps.Keys(dists)), "every distribution")

	// A value the server takes for each parameter, and what each kind needs.
	sample := map[string]any{"after_bytes": 10, "after_fraction": 0.25, "bytes_per_second": 100, "bytes": 16, "ms": 1,
		"min_ms": 1, "max_ms": 2, "median_ms": 1, "sigma": 0.5, "status": 503, "ttl_seconds": 60, "expired_status": 404, "retry_after_seconds": 2,
		"fields": false, "enums": false, "headers": false, "reorder": false}
	needs := map[string]map[string]any{"slow_body": {"bytes_per_second": 100}, "status": {"status": 503},
		"file_expiry": {"ttl_seconds": 60}, "latency": {"distribution": "fixed", "ms": 1}}
	jsonType := map[string]string{"Content-Type": "application/json"}
	add := func(spec map[string]any) (int, string) {
		body, err := json.Marshal(spec)
		require.NoError(t, err)
		resp, out := testkit.Send(t, srv, "POST", "/_mock/faults/rules", "", jsonType, string(body))
		if resp.StatusCode == http.StatusCreated {
			cleared, _ := testkit.Send(t, srv, "DELETE", "/_mock/faults", "", jsonType, "")
			require.Equal(t, http.StatusOK, cleared.StatusCode)
		}
		return resp.StatusCode, out
	}
	with := func(kind string, extra map[string]any) map[string]any {
		out := map[string]any{"kind": kind}
		maps.Copy(out, needs[kind])
		maps.Copy(out, extra)
		return out
	}
	for kind, k := range kinds {
		offered := map[string]bool{}
		for _, p := range k.params {
			offered[p] = true
			if p == "distribution" {
				continue
			}
			status, out := add(with(kind, map[string]any{p: sample[p]}))
			assert.Equal(t, http.StatusCreated, status, "%s takes %s, as the page says: %s", kind, p, out)
		}
		if offered["distribution"] {
			for d, params := range dists {
				spec := map[string]any{"kind": kind, "distribution": d}
				for _, p := range params {
					offered[p] = true
					spec[p] = sample[p]
				}
				status, out := add(spec)
				assert.Equal(t, http.StatusCreated, status, "%s %s takes %v: %s", kind, d, params, out)
			}
		}
		for p, v := range sample {
			if offered[p] {
				continue
			}
			status, out := add(with(kind, map[string]any{p: v}))
			assert.Equal(t, http.StatusBadRequest, status, "%s refuses %s, which the page hides: %s", kind, p, out)
			assert.Contains(t, out, fmt.Sprintf(`"field":%q`, p), "the refusal names the field")
		}
		status, out := add(with(kind, nil))
		assert.Equal(t, http.StatusCreated, status, "%s with what it needs alone: %s", kind, out)

		// Hidden targeting: an operation for a kind that strikes whole
		// requests or files, a probability for file_expiry, is refused.
		targets := k.targets
		if targets == nil {
			targets = []string{"class", "operation", "modality", "probability", "first"}
		}
		for field, v := range map[string]any{"operation": "*", "probability": 0.5, "first": 1} {
			status, out := add(with(kind, map[string]any{field: v}))
			if slices.Contains(targets, field) {
				assert.Equal(t, http.StatusCreated, status, "%s takes %s, as the page says: %s", kind, field, out)
			} else {
				assert.Equal(t, http.StatusBadRequest, status, "%s refuses %s, which the page hides: %s", kind, field, out)
			}
		}
	}
}
