package fault

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mediamock/mediamock/internal/refdoc"
	"github.com/mediamock/mediamock/spec"
)

var updateDocs = flag.Bool("update-docs", false, "write docs/reference/fault-kinds.md from the kind table")

// TestFaultKindsReference holds docs/reference/fault-kinds.md to the kind
// table: a kind, a parameter, a stage or a shorthand changed without the
// page fails. `go test ./internal/fault -run TestFaultKindsReference
// -update-docs` rewrites it.
func TestFaultKindsReference(t *testing.T) {
	for stage := range stageNames {
		if stageDocs[stage] == "" {
			t.Errorf("stage %s has no stageDocs entry", stageNames[stage])
		}
	}
	refdoc.Check(t, "../../docs/reference/fault-kinds.md", faultKindsReference(), *updateDocs,
		"go test ./internal/fault -run TestFaultKindsReference -update-docs")
}

// faultKindsReference is the reference of the fault kinds: every row of
// the kind table, its parameters, and the shorthand endpoints.
func faultKindsReference() []byte {
	p := refdoc.New("Fault kinds", "the kind table of `internal/fault` (`kinds.go`, `params.go`)",
		"go test ./internal/fault -run TestFaultKindsReference -update-docs")
	p.Para("Every fault the server can inject, in the order of the kind table. A rule of any kind is added with " +
		"[`POST /_mock/faults/rules`](control-api.md#post-_mockfaultsrules) (`{\"kind\": \"truncate\", \"after_fraction\": 0.5, \"first\": 1}`), scoped to the whole server, " +
		"a sandbox (`?sandbox=`) or a workspace (`?workspace_id=`); the shorthand endpoints make rules of one kind. " +
		"A kind that strikes requests can also be asked for on one request with the `" + Header + "` header " +
		"(`" + Header + ": truncate; after_bytes=1024`), which replaces the rules at its own stage for that request.")
	p.Para(deliveryNote)
	short := map[string][]string{}
	for _, s := range Shorthands {
		short[s.Kind] = append(short[s.Kind], "`"+endpoint(s)+"`")
	}
	var rows [][]string
	for _, k := range KindTable() {
		rows = append(rows, []string{"[`" + k.Name + "`](#" + k.Name + ")", stageNames[k.Stage],
			strikes(k), codes(k.Params), codes(targetsOf(k)), strings.Join(short[k.Name], "<br>")})
	}
	p.Table([]string{"kind", "stage", "strikes", "parameters", "targeting", "made by"}, rows)

	p.Heading(2, "Kinds")
	params := map[string]Param{}
	for _, pr := range ParamTable() {
		params[pr.Name] = pr
	}
	for _, k := range KindTable() {
		p.Heading(3, k.Name)
		p.Para(upper(k.Doc))
		items := []string{
			fmt.Sprintf("Stage: `%s`, %s.", stageNames[k.Stage], stageDocs[k.Stage]),
			"Strikes: " + strikes(k) + ".",
			"Targeting: " + listOr(backquote(targetsOf(k)), "none: it strikes every job or delivery of its scope") + ".",
		}
		if k.Classes != nil {
			items = append(items, "`"+Header+"` header: yes.")
		} else {
			items = append(items, "`"+Header+"` header: no (decided in the simulation; add a rule).")
		}
		for _, s := range Shorthands {
			if s.Kind == k.Name {
				items = append(items, fmt.Sprintf("Made by `%s`: %s.", endpoint(s), s.Doc))
			}
		}
		p.List(items)
		if len(k.Params) > 0 {
			rows = nil
			for _, name := range k.Params {
				pr := params[name]
				rows = append(rows, []string{"`" + name + "`", refdoc.Code(pr.Schema), pr.Doc})
			}
			p.Table([]string{"parameter", "schema", "what it does"}, rows)
		} else {
			p.Para("It takes no parameters.")
		}
	}

	p.Heading(2, "Targeting")
	p.Para("Whom a rule strikes and how often, beside its kind's parameters; a kind takes the fields its row lists " +
		"(a kind that strikes requests takes `class` too). The descriptions are `FaultSpec`'s in `control.json`.")
	p.Table([]string{"field", "what it does", "kinds that take it"}, targetRows())

	p.Heading(2, "Stages")
	p.Para("Where in a request's (or a job's) life each kind is decided.")
	rows = nil
	for _, st := range stagesInOrder() {
		var names []string
		for _, k := range KindTable() {
			if k.Stage == st {
				names = append(names, k.Name)
			}
		}
		rows = append(rows, []string{"`" + stageNames[st] + "`", stageDocs[st], codes(names)})
	}
	p.Table([]string{"stage", "when", "kinds"}, rows)

	p.Heading(2, "Shorthand endpoints")
	p.Para("Control endpoints that make rules of one kind; a rule made by one names it in its `via`.")
	rows = nil
	for _, s := range Shorthands {
		rows = append(rows, []string{"`" + endpoint(s) + "`", "`" + s.Kind + "`", "`" + s.Via + "`", s.Doc})
	}
	p.Table([]string{"endpoint", "kind", "via", "what it makes"}, rows)

	p.Heading(2, "Parameters")
	p.Para("Every parameter of the kinds, as `FaultSpec` in `control.json` describes it.")
	rows = nil
	for _, pr := range ParamTable() {
		rows = append(rows, []string{"`" + pr.Name + "`", pr.Title, refdoc.Code(pr.Schema), pr.Doc})
	}
	p.Table([]string{"parameter", "label", "schema", "what it does"}, rows)
	return p.Bytes()
}

// strikes says what a kind strikes: path classes, or the simulation's
// jobs or deliveries.
func strikes(k Kind) string {
	if k.Classes == nil {
		if k.Stage == Publish {
			return "publication deliveries (simulation)"
		}
		return "jobs (simulation)"
	}
	return codes(k.Classes)
}

// targetsOf are the targeting fields a kind takes, class included when
// it strikes requests.
func targetsOf(k Kind) []string {
	t := slices.Clone(k.Targets)
	if k.Classes != nil && !slices.Contains(t, TargetClass) {
		t = append([]string{TargetClass}, t...)
	}
	return t
}

// targetRows are the targeting fields, each with its description in
// control.json's FaultSpec and the kinds that take it.
func targetRows() [][]string {
	var doc struct {
		Components struct {
			Schemas struct {
				FaultSpec struct {
					Properties map[string]struct {
						Description string `json:"description"`
					} `json:"properties"`
				} `json:"FaultSpec"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(spec.Control, &doc); err != nil {
		panic(err)
	}
	var rows [][]string
	for _, t := range Targets {
		var names []string
		for _, k := range KindTable() {
			if slices.Contains(targetsOf(k), t) {
				names = append(names, k.Name)
			}
		}
		rows = append(rows, []string{"`" + t + "`", doc.Components.Schemas.FaultSpec.Properties[t].Description, codes(names)})
	}
	return rows
}

func stagesInOrder() []Stage {
	var out []Stage
	for st := range stageNames {
		out = append(out, st)
	}
	slices.Sort(out)
	return out
}

func backquote(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return out
}

func codes(names []string) string { return strings.Join(backquote(names), ", ") }

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// endpoint is a shorthand's method and full path: POST /_mock/faults/fail-next.
func endpoint(s Shorthand) string {
	method, path, _ := strings.Cut(s.Endpoint, " ")
	return method + " /_mock" + path
}
