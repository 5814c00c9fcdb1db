package specdiff

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/spec"
)

// entry is a journal entry of the REST front.
func entry(op, method, path, query string, status int, req, res string) journal.Entry {
	return journal.Entry{Front: "rest", Operation: op, Method: method, Path: "/api/v1" + path, Query: query, Status: status,
		RequestBody: req, RequestBytes: int64(len(req)), ResponseBody: res, ResponseBytes: int64(len(res))}
}

const accountBody = `{"object":"account","workspace_id":1,"workspace_name":"Acme Studio","plan":"pro","credits_balance":5000,"scopes":["read"]}`

func journalOf(t *testing.T, entries ...journal.Entry) *Traffic {
	t.Helper()
	data, err := json.Marshal(map[string]any{"size": 500, "entries": entries})
	require.NoError(t, err)
	tr := &Traffic{}
	require.NoError(t, tr.ReadJournal(data))
	return tr
}

func diffWith(t *testing.T, tr *Traffic) *Report {
	t.Helper()
	r, err := Diff(Options{Base: spec.OpenAPI, Revision: testkit.ChangedOpenAPI(t), Traffic: tr})
	require.NoError(t, err)
	return r
}

// ids lists a report's changes as "operation id", ranked.
func ids(r *Report) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, c.OperationID+" "+c.ID)
	}
	return out
}

func find(t *testing.T, r *Report, op, id string) Change {
	t.Helper()
	for _, c := range r.Changes {
		if c.OperationID == op && c.ID == id {
			return c
		}
	}
	t.Fatalf("no %s %s among %q", op, id, ids(r))
	return Change{}
}

const (
	fieldRemoved = "response-required-property-removed"
	paramEnum    = "request-parameter-enum-value-removed"
	fieldEnum    = "request-property-enum-value-removed"
	newRequired  = "new-required-request-parameter"
)

func TestEveryChangeListed(t *testing.T) {
	r := diffWith(t, nil)
	for _, want := range []string{"getAccount " + fieldRemoved, "listModels " + paramEnum, "createGeneration " + fieldEnum, "listProjects " + newRequired} {
		assert.Contains(t, ids(r), want)
	}
	assert.Equal(t, 4, r.Summary.Breaking)
	assert.Zero(t, r.Summary.Used)
}

func TestWithoutTrafficRankedBySeverityThenDocument(t *testing.T) {
	r := diffWith(t, nil)
	// Breaking first, in openapi.json's order (account, models,
	// generations, projects), then the info.
	assert.Equal(t, []string{
		"getAccount " + fieldRemoved,
		"listModels " + paramEnum,
		"createGeneration " + fieldEnum,
		"listProjects " + newRequired,
		"listModels response-property-enum-value-removed",
	}, ids(r))
	for i, c := range r.Changes {
		assert.Equal(t, i+1, c.Rank)
		assert.False(t, c.Use.Used)
	}
}

func TestTrafficRanksWhatItUsedFirst(t *testing.T) {
	cases := []struct {
		name    string
		traffic func(t *testing.T) *Traffic
		first   string
		use     Use
	}{{
		name: "journal: the client read the removed field",
		traffic: func(t *testing.T) *Traffic {
			return journalOf(t, entry("getAccount", "GET", "/account", "", 200, "", accountBody),
				entry("getAccount", "GET", "/account", "", 200, "", accountBody))
		},
		first: "getAccount " + fieldRemoved,
		use:   Use{Used: true, Calls: 2, Known: true, Hits: 2, Sample: 2, Element: "response field credits_balance (200)"},
	}, {
		name: "journal: the client sent the removed enum value",
		traffic: func(t *testing.T) *Traffic {
			return journalOf(t, entry("getAccount", "GET", "/account", "", 200, "", `{"object":"account"}`),
				entry("listModels", "GET", "/models", "modality=audio", 200, "", `{"object":"model_catalog"}`),
				entry("listModels", "GET", "/models", "modality=image", 200, "", `{"object":"model_catalog"}`))
		},
		first: "listModels " + paramEnum,
		use:   Use{Used: true, Calls: 2, Known: true, Hits: 1, Sample: 2, Element: "query parameter modality=audio"},
	}, {
		name: "journal without an operation id: the path names it",
		traffic: func(t *testing.T) *Traffic {
			return journalOf(t, entry("", "POST", "/generations", "", 202, `{"model_id":"x","modality":"audio","prompt":"p"}`, `{}`))
		},
		first: "createGeneration " + fieldEnum,
		use:   Use{Used: true, Calls: 1, Known: true, Hits: 1, Sample: 1, Element: "request field modality=audio"},
	}, {
		name: "journal: a call without the new required parameter",
		traffic: func(t *testing.T) *Traffic {
			return journalOf(t, entry("listProjects", "GET", "/projects", "limit=5", 200, "", `{"object":"list"}`))
		},
		first: "listProjects " + newRequired,
		use:   Use{Used: true, Calls: 1, Known: true, Hits: 1, Sample: 1, Element: "without query parameter region"},
	}, {
		name: "coverage: the operation was called",
		traffic: func(t *testing.T) *Traffic {
			tr := &Traffic{}
			require.NoError(t, tr.ReadCoverage([]byte(`{"operations":[
				{"operation":"getAccount","method":"GET","path":"/account","statuses":[{"status":200,"count":0,"declared":true}]},
				{"operation":"listProjects","method":"GET","path":"/projects","statuses":[{"status":200,"count":4,"declared":true},{"status":401,"count":1,"declared":true}]}]}`)))
			return tr
		},
		first: "listProjects " + newRequired,
		use:   Use{Used: true, Calls: 5},
	}, {
		name: "journal: the client read the removed enum value, at another property of the shared schema",
		traffic: func(t *testing.T) *Traffic {
			return journalOf(t, entry("listModels", "GET", "/models", "", 200, "", `{"object":"model_catalog","modalities":{"audio":[{"id":"m","modality":"audio"}]}}`))
		},
		first: "listModels response-property-enum-value-removed",
		use:   Use{Used: true, Calls: 1, Known: true, Hits: 1, Sample: 1, Element: "response field modalities/audio/items/modality=audio (200)"},
	}, {
		name: "mcp: a tool's arguments hold the parameters",
		traffic: func(t *testing.T) *Traffic {
			return journalOf(t, journal.Entry{Front: "mcp", MCPMethod: "tools/call", Operation: "listModels", Status: 200,
				RequestBody: `{"modality":"audio"}`, RequestBytes: 20})
		},
		first: "listModels " + paramEnum,
		use:   Use{Used: true, Calls: 1, Known: true, Hits: 1, Sample: 1, Element: "query parameter modality=audio"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := diffWith(t, tc.traffic(t))
			require.NotEmpty(t, r.Changes)
			assert.Equal(t, tc.first, r.Changes[0].OperationID+" "+r.Changes[0].ID, "ranked: %q", ids(r))
			assert.Equal(t, tc.use, r.Changes[0].Use)
			assert.Equal(t, 1, r.Summary.Used, "one change used: %q", ids(r))
			for _, c := range r.Changes[1:] {
				assert.False(t, c.Use.Used, "%s %s", c.OperationID, c.ID)
			}
		})
	}
}

func TestTrafficThatMissesTheElement(t *testing.T) {
	// The client called each changed operation, but read no
	// credits_balance, sent image only and sent region already.
	r := diffWith(t, journalOf(t,
		entry("getAccount", "GET", "/account", "", 200, "", `{"object":"account"}`),
		entry("listModels", "GET", "/models", "modality=image", 200, "", `{}`),
		entry("createGeneration", "POST", "/generations", "", 202, `{"modality":"image"}`, `{}`),
		entry("listProjects", "GET", "/projects", "region=eu", 200, "", `{}`),
	))
	assert.Zero(t, r.Summary.Used, "%q", ids(r))
	for _, c := range r.Changes {
		assert.Equal(t, Use{Calls: 1, Known: true, Sample: 1}, c.Use, "%s %s", c.OperationID, c.ID)
		assert.Equal(t, "no 0/1", c.Use.UsedText())
	}
	// Missed but called comes before never called: all were called, so
	// the order is severity and document order again.
	assert.Equal(t, "getAccount "+fieldRemoved, ids(r)[0])
}

func TestTruncatedBodyTellsNothing(t *testing.T) {
	e := entry("getAccount", "GET", "/account", "", 200, "", accountBody[:40])
	e.ResponseBodyTruncated, e.ResponseBytes = true, int64(len(accountBody))
	r := diffWith(t, journalOf(t, e))
	c := r.Changes[0]
	assert.Equal(t, "getAccount "+fieldRemoved, c.OperationID+" "+c.ID)
	assert.Equal(t, Use{Used: true, Calls: 1}, c.Use, "called, the field unknown")
	assert.Equal(t, "yes", c.Use.UsedText())
}

func TestSameDocumentNoChanges(t *testing.T) {
	r, err := Diff(Options{Base: spec.OpenAPI, Revision: spec.OpenAPI})
	require.NoError(t, err)
	assert.Empty(t, r.Changes)
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), out.String())
	assert.Contains(t, out.String(), ": 0 changes")
}

func TestYAMLRevision(t *testing.T) {
	yaml := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /account:\n    get:\n      operationId: getAccount\n      responses:\n        '200': {description: ok}\n"
	r, err := Diff(Options{Base: spec.OpenAPI, Revision: []byte(yaml), RevisionName: "theirs.yaml"})
	require.NoError(t, err)
	assert.Contains(t, ids(r), "listModels api-path-removed-without-deprecation")
}

func TestBadDocuments(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":      "",
		"not json":   "hello: [",
		"no openapi": `{"a":1}`,
		"swagger 2":  `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{}}`,
		"no paths":   `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Diff(Options{Base: spec.OpenAPI, Revision: []byte(doc), RevisionName: "theirs.json"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "theirs.json")
		})
	}
}

func TestReadJournalFormats(t *testing.T) {
	e := `{"id":"req_1","front":"rest","method":"GET","path":"/api/v1/account","operation":"getAccount","status":200}`
	cases := map[string]string{
		"GET /_mock/journal": `{"size":500,"entries":[` + e + `,` + e + `]}`,
		"array":              `[` + e + `,` + e + `]`,
		"json lines":         e + "\n" + e + "\n",
		"journal events":     `{"type":"journal","entry":` + e + "}\n" + `{"type":"clock","now":"x"}` + "\n" + `{"type":"journal","entry":` + e + "}\n",
		"event stream (SSE)": "id: 1\nevent: journal\ndata: {\"type\":\"journal\",\"entry\":" + e + "}\n\n: ping\nid: 2\nevent: journal\ndata: {\"type\":\"journal\",\"entry\":" + e + "}\n",
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			tr := &Traffic{}
			require.NoError(t, tr.ReadJournal([]byte(data)))
			assert.Len(t, tr.entries, 2)
		})
	}
	for name, data := range map[string]string{
		"empty":          "",
		"not json":       "hello",
		"an error":       `{"error":{"code":"validation_failed","message":"limit"}}`,
		"a coverage":     `{"operations":[]}`,
		"a broken array": `[{"method":`,
	} {
		t.Run("bad "+name, func(t *testing.T) {
			require.Error(t, (&Traffic{}).ReadJournal([]byte(data)))
		})
	}
	require.Error(t, (&Traffic{}).ReadCoverage([]byte(`{"entries":[]}`)), "a journal is no coverage")
	require.Error(t, (&Traffic{}).ReadCoverage([]byte(`nope`)))
}

func TestTextTable(t *testing.T) {
	r := diffWith(t, journalOf(t, entry("getAccount", "GET", "/account", "", 200, "", accountBody)))
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2+len(r.Changes), out.String())
	assert.Contains(t, lines[0], "traffic (journal): 1 call of 1 operation, 1 change used (1 breaking)")
	assert.Regexp(t, `^RANK\s+SEVERITY\s+USED\s+CALLS\s+OPERATION\s+CHANGE\s+MESSAGE$`, lines[1])
	assert.Regexp(t, `^1\s+breaking\s+yes 1/1\s+1\s+GET /account \(getAccount\)\s+`+fieldRemoved+`\s+removed the required property .credits_balance.* \[used: response field credits_balance \(200\)\]$`, lines[2])
	assert.Regexp(t, `^2\s+breaking\s+no\s+0\s+GET /models`, lines[3])
}
