package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// faultRules reads the rules of a scope through the control API
// (GET /_mock/faults).
func faultRules(t *testing.T, srv *mediamock.Server, query string) []map[string]any {
	t.Helper()
	resp, body := get(t, srv, "GET", "/_mock/faults"+query)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var f struct {
		Rules []map[string]any `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	return f.Rules
}

// shown lists the data-* values of the labels of the rule form a selector
// names that are shown.
func shown(b *browser, attr string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll('#fault-rule [data-%s]:not([hidden])')].map(l => l.dataset[%q])`, attr, attr))
}

// Fault rules from the page: the form shows the inputs of the chosen kind
// alone and sends what is filled in; the table lists the scope's rules
// with their counts, which follow the requests; a refused spec says why in
// the form, naming the field, and adds nothing; Delete and Clear remove
// rules (Delete of a rule gone already says so); a rule added while a
// sandbox is the scope is the sandbox's.
func TestDashboardFaultRulesInBrowser(t *testing.T) {
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	sb, err := srv.NewSandbox(mediamock.SandboxSpec{Name: "suite faults"})
	require.NoError(t, err)

	b.do("open the dashboard", chromedp.Navigate(srv.URL()+"/_mock/ui/#faults"))
	b.visible("the event stream is live", `#live[data-state="live"]`)
	b.visible("the faults panel shows", `#panel-faults[data-loaded]`)
	b.visible("no rule yet", `#fault-rules-empty`)

	// The form is control.json's: every kind (those that strike requests
	// first), and for each its parameters, labelled with their titles, and
	// its targeting (a class when it strikes several), its doc as the hint.
	kinds, props := faultDocument(t)
	_, js := get(t, srv, "GET", "/_mock/ui/app.js")
	dists := distributions(t, js)
	var names, simulated []string
	for _, k := range kinds {
		if len(k.Classes) > 0 {
			names = append(names, k.Name)
		} else {
			simulated = append(simulated, k.Name)
		}
	}
	names = append(names, simulated...)
	kind := `#fault-rule select[name="kind"]`
	assert.Equal(t, names, eval[[]string](b, `[...document.querySelector('#fault-rule select[name="kind"]').options].map(o => o.value)`),
		"every kind of control.json")
	for _, k := range kinds {
		b.choose("choose "+k.Name, kind, k.Name)
		params := []string{}
		for _, p := range k.Params {
			other := false
			for d, ps := range dists {
				other = other || d != props["distribution"].Enum[0] && slices.Contains(ps, p) // the first is chosen
			}
			if !other {
				params = append(params, p)
			}
		}
		assert.Equal(t, params, shown(b, "param"), "the parameters of %s", k.Name)
		targets := slices.DeleteFunc(append([]string{}, k.Targets...), func(s string) bool { return s == "class" && len(k.Classes) < 2 })
		assert.Equal(t, targets, shown(b, "target"), "the targeting of %s", k.Name)
		assert.Equal(t, len(targets) == 0, eval[bool](b, `!document.querySelector('#fault-target-none').hidden`), "%s says when it takes no targeting", k.Name)
		if slices.Contains(targets, "class") {
			assert.Equal(t, append([]string{""}, k.Classes...), eval[[]string](b, `[...document.querySelector('#fault-rule select[name="class"]').options].map(o => o.value)`),
				"the classes %s strikes", k.Name)
		}
		hint := strings.ReplaceAll(k.Doc, "`", "")
		if !strings.HasPrefix(k.Doc, "`") { // code keeps its case
			hint = strings.ToUpper(hint[:1]) + hint[1:]
		}
		assert.Equal(t, hint, eval[string](b, `document.querySelector('#fault-kind-hint').textContent`), "the hint of %s is its doc", k.Name)
		for _, p := range params {
			s := props[p]
			got := eval[map[string]any](b, fmt.Sprintf(`(() => { const l = document.querySelector('#fault-rule [data-param="%s"]'); const el = l.querySelector('input, select');
				return { label: l.firstChild.textContent.trim(), tag: el.localName, type: el.type, min: el.min, max: el.max, num: el.dataset.num || '', bool: el.dataset.bool || '', first: el.options ? el.options[0].value : '' } })()`, p))
			assert.Equal(t, s.Title, got["label"], "the label of %s is its title", p)
			switch {
			case s.Type == "boolean" || len(s.Enum) > 0:
				assert.Equal(t, "select", got["tag"], "%s is a choice", p)
				assert.Equal(t, s.Type == "integer", got["num"] == "true", "%s is sent as a number", p)
				assert.Equal(t, s.Type == "boolean", got["bool"] == "true", "%s is sent as a boolean", p)
				assert.Equal(t, s.Default != nil, got["first"] == "", "%s: its default is the empty choice", p)
			case s.Type == "integer" || s.Type == "number":
				assert.Equal(t, "number", got["type"], "%s is a number", p)
				if s.Minimum != nil {
					assert.Equal(t, fmt.Sprint(*s.Minimum), got["min"], "the least %s", p)
				}
			default:
				assert.Equal(t, "text", got["type"], "%s is text", p)
			}
		}
	}
	b.choose("choose reset", kind, "reset")

	// The inputs follow the kind (and latency's distribution).
	assert.Equal(t, []string{"after_bytes"}, shown(b, "param"), "reset")
	b.choose("choose latency", kind, "latency")
	assert.Equal(t, []string{"distribution", "ms"}, shown(b, "param"))
	b.do("a latency typed in", chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="ms"]`), "250"))
	b.choose("a uniform latency", `#fault-rule select[name="distribution"]`, "uniform")
	assert.Equal(t, []string{"distribution", "min_ms", "max_ms"}, shown(b, "param"))
	b.choose("choose file_expiry", kind, "file_expiry")
	assert.Equal(t, []string{"ttl_seconds", "expired_status"}, shown(b, "param"))
	assert.Equal(t, []string{"modality"}, shown(b, "target"), "file_expiry strikes every download of the files")
	b.choose("choose mcp_unavailable", kind, "mcp_unavailable")
	assert.Equal(t, []string{"retry_after_seconds"}, shown(b, "param"))
	assert.Equal(t, []string{"probability", "first"}, shown(b, "target"))

	// A truncate rule from the form: what is filled in, and shown, alone.
	b.choose("choose truncate", kind, "truncate")
	assert.Equal(t, []string{"after_bytes", "after_fraction"}, shown(b, "param"))
	assert.Equal(t, []string{"class", "operation", "modality", "probability", "first"}, shown(b, "target"))
	b.do("fill it in",
		chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="after_bytes"]`), "1024"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule select[name="class"]`), "api"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="first"]`), "2"))
	b.press("add it", `#fault-rule button[type="submit"]`)
	b.visible("it is listed", `#fault-rule-table tr[data-kind="truncate"]`)
	id := eval[string](b, `document.querySelector('#fault-rule-table tr[data-kind="truncate"]').dataset.rule`)
	row := fmt.Sprintf(`#fault-rule-table tr[data-rule="%s"]`, id)
	text := eval[string](b, fmt.Sprintf(`document.querySelector('%s').innerText`, row))
	for _, want := range []string{id, "truncate", "api", "after_bytes=1024", "first 2"} {
		assert.Contains(t, text, want)
	}
	assert.True(t, eval[bool](b, `document.querySelector('#fault-rules-empty').hidden`))
	rules := faultRules(t, srv, "")
	require.Len(t, rules, 1)
	assert.Equal(t, map[string]any{"id": id, "kind": "truncate", "class": "api", "after_bytes": 1024.0, "first": 2.0, "matched": 0.0, "hits": 0.0}, rules[0],
		"the fields filled in, numbers as numbers; not the hidden latency")

	// A spec the server refuses: its message, naming the field, in the form.
	b.choose("choose slow_body", kind, "slow_body")
	b.press("add it without bytes_per_second", `#fault-rule button[type="submit"]`)
	b.visible("the form says why", `#fault-rule-error:not([hidden])`)
	assert.Contains(t, eval[string](b, `document.querySelector('#fault-rule-error').textContent`), "bytes_per_second: is required")
	assert.Equal(t, "bytes_per_second", eval[string](b, `document.querySelector('#fault-rule-error .fields code').textContent`), "the field is named")
	assert.Equal(t, "true", eval[string](b, `document.querySelector('#fault-rule input[name="bytes_per_second"]').getAttribute('aria-invalid')`))
	assert.Equal(t, "bytes_per_second", eval[string](b, `document.activeElement.name`), "the focus is on the field")
	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll('#fault-rule-table tbody tr').length`), "nothing added")
	assert.Len(t, faultRules(t, srv, ""), 1, "nothing added")
	b.screenshot("fault-rule-refused")
	b.choose("choose truncate again", kind, "truncate")
	assert.True(t, eval[bool](b, `document.querySelector('#fault-rule-error').hidden`), "a new kind, a new start")
	assert.Zero(t, eval[int](b, `document.querySelectorAll('#fault-rule [aria-invalid]').length`))

	// Delete, with the row's button.
	b.press("delete it", row+` button[data-action="delete"]`)
	b.until("it leaves the table", fmt.Sprintf(`!document.querySelector('%s')`, row))
	b.visible("no rule again", `#fault-rules-empty`)
	assert.Empty(t, faultRules(t, srv, ""), "it is gone")

	// A status rule on one operation: its counts follow the requests.
	b.choose("choose status", kind, "status")
	b.do("fill it in",
		chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="status"]`), "503"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule select[name="class"]`), ""),
		chromedp.SetValue(chromedp.CSS(`#fault-rule select[name="operation"]`), "getAccount"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="first"]`), ""))
	b.press("add it", `#fault-rule button[type="submit"]`)
	b.visible("it is listed", `#fault-rule-table tr[data-kind="status"]`)
	rules = faultRules(t, srv, "")
	require.Len(t, rules, 1)
	assert.Equal(t, 503.0, rules[0]["status"])
	assert.Equal(t, "getAccount", rules[0]["operation"])
	status, _, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
	require.Equal(t, http.StatusServiceUnavailable, status, "the rule struck")
	b.until("the table counts it", `(() => { const r = document.querySelector('#fault-rule-table tr[data-kind="status"]');
		return !!r && r.querySelector('.matched').textContent === '1' && r.querySelector('.hits').textContent === '1' })()`)
	b.screenshot("fault-rules")
	b.press("clear every fault", `#faults-clear`)
	b.visible("no rule again", `#fault-rules-empty`)
	assert.Empty(t, faultRules(t, srv, ""))

	// A rule deleted elsewhere (no event tells of it): its Delete says so
	// and the table is the server's again.
	b.choose("choose mcp_stream_drop", kind, "mcp_stream_drop")
	b.press("add it", `#fault-rule button[type="submit"]`)
	b.visible("it is listed", `#fault-rule-table tr[data-kind="mcp_stream_drop"]`)
	gone := eval[string](b, `document.querySelector('#fault-rule-table tr[data-kind="mcp_stream_drop"]').dataset.rule`)
	resp, body := testkit.Send(t, srv, "DELETE", "/_mock/faults/rules/"+gone, "", map[string]string{"Content-Type": "application/json"}, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	b.press("delete it from the page", `#fault-rule-table tr[data-kind="mcp_stream_drop"] button[data-action="delete"]`)
	b.until("the page says it was gone", `document.querySelector('#toast').textContent.includes('gone already')`)
	b.visible("no rule again", `#fault-rules-empty`)

	// The kinds decided in the simulation: a job_failure rule from the
	// form, a platform_failure one, and a failure_rate one a shorthand
	// made, which says so. Their rows read: their parameters, their
	// targeting, or that they take none.
	b.choose("choose job_failure", kind, "job_failure")
	b.do("fill it in",
		chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="model"]`), "imagen-4"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule select[name="stage"]`), "queued"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule input[name="code"]`), "content_policy"),
		chromedp.SetValue(chromedp.CSS(`#fault-rule select[name="modality"]`), "image"))
	b.press("add it", `#fault-rule button[type="submit"]`)
	b.visible("it is listed", `#fault-rule-table tr[data-kind="job_failure"]`)
	text = eval[string](b, `document.querySelector('#fault-rule-table tr[data-kind="job_failure"]').innerText`)
	for _, want := range []string{"image", "model=imagen-4", "stage=queued", "code=content_policy", "always"} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "via")
	b.choose("choose platform_failure", kind, "platform_failure")
	assert.Equal(t, []string{"platform"}, shown(b, "param"))
	b.choose("choose instagram", `#fault-rule select[name="platform"]`, "instagram")
	b.press("add it", `#fault-rule button[type="submit"]`)
	b.visible("it is listed", `#fault-rule-table tr[data-kind="platform_failure"]`)
	text = eval[string](b, `document.querySelector('#fault-rule-table tr[data-kind="platform_failure"]').innerText`)
	for _, want := range []string{"platform=instagram", "no targeting", "always"} {
		assert.Contains(t, text, want)
	}
	b.press("set a failure rate with its shorthand", `#fault-rate button[type="submit"]`)
	b.visible("its rule is listed", `#fault-rule-table tr[data-kind="failure_rate"]`)
	text = eval[string](b, `document.querySelector('#fault-rule-table tr[data-kind="failure_rate"]').innerText`)
	for _, want := range []string{"via failure-rate", "rate=0.25", "no targeting", "always"} {
		assert.Contains(t, text, want)
	}
	rules = faultRules(t, srv, "")
	require.Len(t, rules, 3)
	assert.Equal(t, map[string]any{"id": rules[0]["id"], "kind": "job_failure", "modality": "image", "model": "imagen-4", "stage": "queued",
		"code": "content_policy", "matched": 0.0, "hits": 0.0}, rules[0], "the fields filled in, and no other")
	assert.Equal(t, "failure-rate", rules[2]["via"])
	b.screenshot("fault-rules-simulation")
	b.press("clear every fault", `#faults-clear`)
	b.visible("no rule again", `#fault-rules-empty`)

	// A global rule strikes a sandbox too: the sandbox's list shows it
	// after its own, marked, without a button to delete it there.
	jsonType := map[string]string{"Content-Type": "application/json"}
	resp, body = testkit.Send(t, srv, "POST", "/_mock/faults/rules", "", jsonType, `{"kind":"status","status":500,"operation":"listModels"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, body)
	var global struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &global))

	// In a sandbox's scope, a rule is the sandbox's alone.
	b.choose("scope the panels to the sandbox", `#scope`, sb.ID)
	b.visible("the faults are the sandbox's", fmt.Sprintf(`#faults-scope[data-scope="sandbox %s"]`, sb.ID))
	b.visible("the global rule is listed, marked", `#fault-rule-table tr[data-scope="global"][data-kind="status"]`)
	assert.Zero(t, eval[int](b, `document.querySelectorAll('#fault-rule-table tr[data-scope="global"] button').length`), "deleted from the whole server's scope, not here")
	resp, body = testkit.Send(t, srv, "DELETE", "/_mock/faults/rules/"+global.ID, "", jsonType, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	b.choose("choose empty_reply", kind, "empty_reply")
	b.press("add it", `#fault-rule button[type="submit"]`)
	b.visible("it is listed", `#fault-rule-table tr[data-kind="empty_reply"]`)
	sbRules := faultRules(t, srv, "?sandbox="+sb.ID)
	require.Len(t, sbRules, 1)
	assert.Equal(t, "empty_reply", sbRules[0]["kind"])
	assert.Empty(t, faultRules(t, srv, ""), "not the whole server's")
	b.press("delete it", `#fault-rule-table tr[data-kind="empty_reply"] button[data-action="delete"]`)
	b.visible("no rule again", `#fault-rules-empty`)
	assert.Empty(t, faultRules(t, srv, "?sandbox="+sb.ID))

	// At a phone's width the panel fits.
	b.do("a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.panel("faults")
	assert.True(t, eval[bool](b, `document.documentElement.scrollWidth <= window.innerWidth`), "the faults panel fits a phone's width")
	b.screenshot("phone-fault-rules")

	// The browser logs the refused spec's 400 and the gone rule's 404,
	// and nothing else.
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Len(t, b.problems, 2, "%q", b.problems)
	assert.True(t, strings.Contains(b.problems[0], "400") && strings.Contains(b.problems[0], "/_mock/faults/rules"), b.problems[0])
	assert.True(t, strings.Contains(b.problems[1], "404") && strings.Contains(b.problems[1], "/_mock/faults/rules/"+gone), b.problems[1])
}
