package fault

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mediamock/mediamock/internal/refdoc"
)

// Reference is the reference page of the fault kinds,
// docs/reference/fault-kinds.md: every registered kind, its parameters,
// the targeting (with control's FaultSpec descriptions: control is
// control.json), the stages and the shorthand endpoints. go generate ./...
// writes it.
func Reference(control []byte) ([]byte, error) {
	targetDocs, err := targetDescriptions(control)
	if err != nil {
		return nil, err
	}
	p := refdoc.New("Fault kinds", "the kinds registered in `internal/fault` (a file per kind)", refdoc.Command)
	p.Para("Every fault the server can inject, by stage, then by name. A rule of any kind is added with " +
		"[`POST /_mock/faults/rules`](control-api.md#post-_mockfaultsrules) (`{\"kind\": \"" + Truncate + "\", \"after_fraction\": 0.5, \"first\": 1}`), scoped to the whole server, " +
		"a sandbox (`?sandbox=`) or a workspace (`?workspace_id=`); the shorthand endpoints make rules of one kind. " +
		"A kind that strikes requests can also be asked for on one request with the `" + Header + "` header " +
		"(`" + Header + ": " + Truncate + "; after_bytes=1024`), which replaces the rules at its own stage for that request.")
	p.Para(kindsNote())
	var rows [][]string
	for _, k := range kinds {
		var made []string
		for _, s := range k.about.Shorthands {
			made = append(made, "`"+endpoint(s)+"`")
		}
		rows = append(rows, []string{"[`" + k.name + "`](#" + k.name + ")", k.about.Stage.String(), strikes(k), k.about.Meets,
			codes(k.paramNames()), codes(targetsOf(k)), strings.Join(made, "<br>")})
	}
	p.Table([]string{"kind", "stage", "strikes", "what the client meets", "parameters", "targeting", "made by"}, rows)

	p.Heading(2, "Kinds")
	for _, k := range kinds {
		p.Heading(3, k.name)
		p.Para(upper(k.about.Doc))
		items := []string{
			fmt.Sprintf("Stage: `%s`, %s.", k.about.Stage, stageInfo[k.about.Stage].doc),
			"Strikes: " + strikes(k) + ".",
			"Targeting: " + listOr(backquote(targetsOf(k)), "none: it strikes every job or delivery of its scope") + ".",
		}
		if k.about.Strikes != nil {
			items = append(items, "`"+Header+"` header: yes.")
		} else {
			items = append(items, "`"+Header+"` header: no (decided in the simulation; add a rule).")
		}
		for _, s := range k.about.Shorthands {
			items = append(items, fmt.Sprintf("Made by `%s`: %s.", endpoint(s), s.Doc))
		}
		p.List(items)
		if len(k.params) > 0 {
			rows = nil
			for _, kp := range k.params {
				need := ""
				if kp.required {
					need = "yes"
				}
				rows = append(rows, []string{"`" + kp.Name + "`", refdoc.Code(kp.facts()), need, kp.doc()})
			}
			p.Table([]string{"parameter", "schema", "required", "what it does"}, rows)
		} else {
			p.Para("It takes no parameters.")
		}
	}

	p.Heading(2, "Targeting")
	p.Para("Whom a rule strikes and how often, beside its kind's parameters; a kind takes the fields its section lists " +
		"(a kind that strikes requests takes `class` too). The descriptions are `FaultSpec`'s in `control.json`.")
	rows = nil
	for _, t := range Targets {
		var names []string
		for _, k := range kinds {
			if slices.Contains(targetsOf(k), t) {
				names = append(names, k.name)
			}
		}
		rows = append(rows, []string{"`" + t + "`", targetDocs[t], codes(names)})
	}
	p.Table([]string{"field", "what it does", "kinds that take it"}, rows)

	p.Heading(2, "Stages")
	p.Para("Where in a request's (or a job's) life each kind is decided, in that order.")
	rows = nil
	for st := range stages {
		rows = append(rows, []string{"`" + st.String() + "`", stageInfo[st].doc, codes(namesAt(st))})
	}
	p.Table([]string{"stage", "when", "kinds"}, rows)

	p.Heading(2, "Shorthand endpoints")
	p.Para("Control endpoints that make rules of one kind; a rule made by one names it in its `via`.")
	rows = nil
	for _, s := range Shorthands() {
		rows = append(rows, []string{"`" + endpoint(s) + "`", "`" + s.Kind + "`", "`" + s.Via + "`", s.Doc})
	}
	p.Table([]string{"endpoint", "kind", "via", "what it makes"}, rows)

	p.Heading(2, "Parameters")
	p.Para("Every parameter of the kinds, as `FaultSpec` in `control.json` describes it.")
	rows = nil
	for _, pr := range params {
		rows = append(rows, []string{"`" + pr.Name + "`", pr.title, refdoc.Code(pr.facts()), pr.description()})
	}
	p.Table([]string{"parameter", "label", "schema", "what it does"}, rows)
	return p.Bytes(), nil
}

// targetDescriptions are the descriptions of the targeting fields in
// control.json's FaultSpec.
func targetDescriptions(control []byte) (map[string]string, error) {
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
	if err := json.Unmarshal(control, &doc); err != nil {
		return nil, fmt.Errorf("control.json: %w", err)
	}
	out := map[string]string{}
	for _, t := range Targets {
		d := doc.Components.Schemas.FaultSpec.Properties[t].Description
		if d == "" {
			return nil, fmt.Errorf("control.json: FaultSpec's %s has no description", t)
		}
		out[t] = d
	}
	return out, nil
}

// strikes says what a kind strikes: path classes, or the simulation's
// jobs or deliveries.
func strikes(k *registered) string {
	if k.about.Strikes == nil {
		if k.about.Stage == Publish {
			return "publication deliveries (simulation)"
		}
		return "jobs (simulation)"
	}
	return codes(k.about.Strikes)
}

// targetsOf are the targeting fields a kind takes, class included when
// it strikes requests.
func targetsOf(k *registered) []string {
	t := slices.Clone(k.about.Targets)
	if k.about.Strikes != nil && !slices.Contains(t, TargetClass) {
		t = append([]string{TargetClass}, t...)
	}
	return t
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
