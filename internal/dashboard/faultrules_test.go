package dashboard_test

import (
	"bytes"
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

// faultKind is a row of control.json's FaultSpec x-fault-kinds, the table
// the dashboard's rule form is built from.
type faultKind struct {
	Name     string   `json:"-"`
	Stage    string   `json:"stage"`
	Classes  []string `json:"classes"`
	Params   []string `json:"params"`
	Required []string `json:"required"`
	Targets  []string `json:"targets"`
	Doc      string   `json:"doc"`
}

// fieldSchema is the schema of a field of a FaultSpec.
type fieldSchema struct {
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Enum    []any    `json:"enum"`
	Default any      `json:"default"`
	Minimum *float64 `json:"minimum"`
	Maximum *float64 `json:"maximum"`
}

// example is a value the schema takes, made from its facts: a value of its
// enum other than its default, its default, its minimum (or 1 when it has
// none and its maximum allows it), false for a boolean; nil when the facts
// say too little (a string without an enum).
func (s fieldSchema) example() any {
	switch {
	case len(s.Enum) > 0:
		for _, v := range s.Enum {
			if v != s.Default {
				return v
			}
		}
		return s.Enum[0]
	case s.Type == "boolean":
		return false
	case s.Default != nil:
		return s.Default
	case s.Type == "integer" || s.Type == "number":
		if s.Minimum != nil && *s.Minimum > 0 {
			return *s.Minimum
		}
		if s.Maximum == nil || *s.Maximum >= 1 {
			return 1
		}
	}
	return nil
}

// faultDocument reads control.json's FaultSpec: the kinds, in the
// document's order, and the schema of each field.
func faultDocument(t *testing.T) ([]faultKind, map[string]fieldSchema) {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas struct {
				FaultSpec struct {
					Properties map[string]fieldSchema `json:"properties"`
					Kinds      json.RawMessage        `json:"x-fault-kinds"`
				} `json:"FaultSpec"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(mediamock.ControlDocument, &doc))
	spec := doc.Components.Schemas.FaultSpec
	require.NotEmpty(t, spec.Kinds, "FaultSpec has x-fault-kinds")
	byName := map[string]faultKind{}
	require.NoError(t, json.Unmarshal(spec.Kinds, &byName))
	// The order of the kinds is the order of the object's keys.
	var kinds []faultKind
	dec := json.NewDecoder(bytes.NewReader(spec.Kinds))
	_, err := dec.Token() // {
	require.NoError(t, err)
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		name := tok.(string)
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
		k := byName[name]
		k.Name = name
		kinds = append(kinds, k)
	}
	return kinds, spec.Properties
}

// distributions reads latency's distributions from the served app.js
// (DISTRIBUTIONS): each one's parameters.
func distributions(t *testing.T, js string) map[string][]string {
	t.Helper()
	line := regexp.MustCompile(`const DISTRIBUTIONS = \{([^}]*)\}`).FindStringSubmatch(js)
	require.NotNil(t, line, "app.js lists the distributions")
	dists := map[string][]string{}
	for _, m := range regexp.MustCompile(`(\w+): \[([^\]]*)\]`).FindAllStringSubmatch(line[1], -1) {
		for _, p := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(m[2], -1) {
			dists[m[1]] = append(dists[m[1]], p[1])
		}
	}
	return dists
}

// The fault rule form is built from control.json, and control.json is
// what the server takes: for every kind of FaultSpec's x-fault-kinds, the
// parameters it lists are accepted and every other parameter is refused,
// naming the field; the targeting it lists is accepted and the rest
// refused. The page itself names no kind: a kind added to the table is
// offered with no change to it.
func TestDashboardFaultRuleFormMatchesTheServer(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, js := get(t, srv, "GET", "/_mock/ui/app.js")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, page := get(t, srv, "GET", "/_mock/ui/")
	_, served := get(t, srv, "GET", "/_mock/openapi.json")
	require.JSONEq(t, string(mediamock.ControlDocument), served, "the page reads the document the server serves")
	kinds, props := faultDocument(t)
	require.NotEmpty(t, kinds)
	dists := distributions(t, js)

	// The page names no kind: it reads them (their spellings with an
	// underscore, which are not words of the page otherwise).
	for _, k := range kinds {
		if !strings.Contains(k.Name, "_") {
			continue
		}
		for _, quoted := range []string{"'" + k.Name + "'", `"` + k.Name + `"`, ">" + k.Name + "<", k.Name + ":"} {
			assert.False(t, strings.Contains(js, quoted), "app.js names the kind %s: %s", k.Name, quoted)
			assert.False(t, strings.Contains(page, quoted), "index.html names the kind %s: %s", k.Name, quoted)
		}
	}

	// Every field of a FaultSpec is a kind's parameter, with a title (the
	// form's label) and a type the form has an input for, or targeting.
	params, targets := map[string]bool{}, map[string]bool{}
	for _, k := range kinds {
		for _, p := range k.Params {
			params[p] = true
		}
		for _, tg := range k.Targets {
			targets[tg] = true
		}
	}
	for name, s := range props {
		switch {
		case name == "kind":
		case params[name]:
			assert.NotEmpty(t, s.Title, "%s has a title, the form's label", name)
			assert.Contains(t, []string{"integer", "number", "string", "boolean", "object"}, s.Type, "the form has an input for %s", name)
			assert.False(t, targets[name], "%s is a parameter or targeting, not both", name)
		default:
			assert.True(t, targets[name], "%s is a kind's parameter or targeting", name)
		}
	}
	for p := range params {
		assert.Contains(t, props, p, "a parameter of x-fault-kinds is a field of FaultSpec")
	}
	var distEnum []string
	for _, d := range props["distribution"].Enum {
		distEnum = append(distEnum, d.(string))
	}
	assert.ElementsMatch(t, distEnum, slices.Collect(maps.Keys(dists)), "DISTRIBUTIONS has every distribution")

	// A value the server takes for each parameter and targeting field, and
	// what each kind needs.
	sample := map[string]any{"after_bytes": 10, "after_fraction": 0.25, "bytes_per_second": 100, "bytes": 16, "ms": 1,
		"min_ms": 1, "max_ms": 2, "median_ms": 1, "sigma": 0.5, "status": 503, "ttl_seconds": 60, "expired_status": 404, "retry_after_seconds": 2,
		"fields": false, "enums": false, "headers": false, "reorder": false,
		"model": "imagen-4", "stage": "queued", "code": "content_policy", "rate": 0.5, "platform": "instagram", "at": "processing", "outputs": 2, "social_account_id": 1,
		"message": "Down for maintenance.", "example": "pro_workspace", "body": map[string]any{"error": map[string]any{"code": "service_unavailable", "message": "Down."}}, "drift": true}
	// What a parameter needs beside it, for a kind (a status rule's code is
	// one its operation's answer allows; a body or an example is of an
	// operation, an example of a success).
	alongside := map[string]map[string]any{
		"status/code":    {"code": "service_unavailable"},
		"status/body":    {"operation": "getAccount"},
		"status/example": {"operation": "getAccount", "status": 200, "example": "pro_workspace"},
	}
	// A parameter without a sample here takes one made from its schema.
	for p := range params {
		if _, ok := sample[p]; !ok && p != "distribution" {
			v := props[p].example()
			require.NotNil(t, v, "a sample value of the parameter %s, for this test, or a schema that makes one (an enum, a default, bounds)", p)
			sample[p] = v
		}
	}
	needs := map[string]map[string]any{"slow_body": {"bytes_per_second": 100}, "status": {"status": 503},
		"file_expiry": {"ttl_seconds": 60}, "latency": {"distribution": "fixed", "ms": 1},
		"failure_rate": {"rate": 0.5}, "platform_failure": {"platform": "instagram"}, "account_disconnected": {"platform": "instagram"}}
	targeting := map[string]any{"operation": "*", "modality": "video", "probability": 0.5, "first": 1}
	for tg := range targets {
		if tg != "class" {
			require.Contains(t, targeting, tg, "a sample value of the targeting field %s, for this test", tg)
		}
	}
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
	// What a kind needs beyond what it requires is written above; a kind
	// that needs only its required parameters (x-fault-kinds) takes their
	// samples.
	for _, k := range kinds {
		if _, ok := needs[k.Name]; !ok && len(k.Required) > 0 {
			needs[k.Name] = map[string]any{}
			for _, p := range k.Required {
				needs[k.Name][p] = sample[p]
			}
		}
	}
	with := func(kind string, extra map[string]any) map[string]any {
		out := map[string]any{"kind": kind}
		maps.Copy(out, needs[kind])
		maps.Copy(out, extra)
		return out
	}
	refused := func(kind, field string, v any) {
		t.Helper()
		status, out := add(with(kind, map[string]any{field: v}))
		assert.Equal(t, http.StatusBadRequest, status, "%s refuses %s=%v, which the document does not list for it: %s", kind, field, v, out)
		assert.Contains(t, out, fmt.Sprintf(`"field":%q`, field), "the refusal names the field")
	}
	for _, k := range kinds {
		kind := k.Name
		taken := map[string]bool{}
		for _, p := range k.Params {
			taken[p] = true
			if p == "distribution" || slices.ContainsFunc(slices.Collect(maps.Values(dists)), func(ps []string) bool { return slices.Contains(ps, p) }) {
				continue // with its distribution, below
			}
			extra := map[string]any{p: sample[p]}
			maps.Copy(extra, alongside[kind+"/"+p])
			status, out := add(with(kind, extra))
			assert.Equal(t, http.StatusCreated, status, "%s takes %s, as the document says: %s", kind, p, out)
		}
		if taken["distribution"] {
			for d, ps := range dists {
				spec := map[string]any{"kind": kind, "distribution": d}
				for _, p := range ps {
					assert.True(t, taken[p], "%s takes %s, a parameter of the %s distribution", kind, p, d)
					spec[p] = sample[p]
				}
				status, out := add(spec)
				assert.Equal(t, http.StatusCreated, status, "%s %s takes %v: %s", kind, d, ps, out)
			}
		}
		for p, v := range sample {
			if !taken[p] {
				refused(kind, p, v)
			}
		}
		status, out := add(with(kind, nil))
		assert.Equal(t, http.StatusCreated, status, "%s with what it needs alone: %s", kind, out)

		// The targeting it lists is taken; the rest is refused.
		for field, v := range targeting {
			if slices.Contains(k.Targets, field) {
				status, out := add(with(kind, map[string]any{field: v}))
				assert.Equal(t, http.StatusCreated, status, "%s takes %s, as the document says: %s", kind, field, out)
			} else {
				refused(kind, field, v)
			}
		}
		// A class: the form offers the kind's classes when it has more
		// than one; a kind of one class takes that one alone (the form
		// does not ask), and a kind decided in the simulation none.
		for _, c := range props["class"].Enum {
			class := c.(string)
			if slices.Contains(k.Classes, class) {
				status, out := add(with(kind, map[string]any{"class": class}))
				assert.Equal(t, http.StatusCreated, status, "%s strikes %s: %s", kind, class, out)
			} else {
				refused(kind, "class", class)
			}
		}
		if len(k.Classes) > 1 {
			assert.Contains(t, k.Targets, "class", "%s strikes several classes: it is targeted by class", kind)
		}
	}
}
