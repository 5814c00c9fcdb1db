package dashboard_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// restAs calls the service's API with a key and checks the status.
func restAs(t *testing.T, srv *mediamock.Server, key string, want int, method, path, body string) map[string]any {
	t.Helper()
	status, out, _ := testkit.REST(t, srv, key, method, path, body)
	require.Equal(t, want, status, "%s %s: %v", method, path, out)
	return out
}

// choose picks a value of a select as a person does: the page hears a change.
func (b *browser) choose(what, css, value string) {
	b.t.Helper()
	b.do(what, chromedp.SetValue(chromedp.CSS(css), value))
	require.True(b.t, eval[bool](b, fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event('change', {bubbles: true}))`, css)), what)
}

// sandboxIDs are the ids of the server's sandboxes, read from Go.
func sandboxIDs(srv *mediamock.Server) []string {
	var ids []string
	for _, sb := range srv.Engine().Sandboxes() {
		ids = append(ids, sb.ID)
	}
	return ids
}

// The dashboard and sandboxes in a real browser: the Sandboxes panel lists
// them; the scope (the whole server or one sandbox) narrows the journal,
// coverage and faults to the sandbox's share and the other panels to its
// workspace, survives a new list and a reload, and falls back to the whole
// server when its sandbox goes; a fault set from the page lands in the
// sandbox alone; Run, Reset, Delete (after a confirmation) and Create work
// from the page; at a phone's width too, without a console error.
func TestDashboardSandboxesInBrowser(t *testing.T) {
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	red, err := srv.NewSandbox(mediamock.SandboxSpec{Name: "suite red"})
	require.NoError(t, err)
	blue, err := srv.NewSandbox(mediamock.SandboxSpec{Name: "suite blue", From: "Pixel Garage"})
	require.NoError(t, err)

	// A request by each sandbox, and one by a fixture workspace.
	redAsset := firstAsset(t, restAs(t, srv, red.APIKey, http.StatusCreated, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a red kite"}`))
	restAs(t, srv, blue.APIKey, http.StatusOK, "GET", "/account", "")
	restAs(t, srv, mediamock.KeyAllScopes, http.StatusOK, "GET", "/account", "")
	redRequests := red.Journal(mediamock.JournalFilter{})
	require.Len(t, redRequests, 1)

	b.do("open the dashboard", chromedp.Navigate(srv.URL()+"/_mock/ui/#sandboxes"))
	b.visible("the event stream is live", `#live[data-state="live"]`)
	b.visible("the sandboxes panel shows", `#panel-sandboxes[data-loaded]`)
	row := func(sb string) string { return fmt.Sprintf(`#sandbox-table tr[data-sandbox="%s"]`, sb) }

	// The panel lists both, with their facts; the scope offers both.
	for _, sb := range []*mediamock.Sandbox{red, blue} {
		b.visible(sb.Name+" is listed", row(sb.ID))
		text := eval[string](b, fmt.Sprintf(`document.querySelector('%s').innerText`, row(sb.ID)))
		assert.Contains(t, text, sb.Name)
		assert.Contains(t, text, sb.ID)
		assert.Equal(t, fmt.Sprint(sb.WorkspaceID), eval[string](b, fmt.Sprintf(`document.querySelector('%s').dataset.ws`, row(sb.ID))))
	}
	assert.Contains(t, eval[string](b, fmt.Sprintf(`document.querySelector('%s').innerText`, row(blue.ID))), "Pixel Garage")
	assert.Equal(t, "150", eval[string](b, fmt.Sprintf(`document.querySelector('%s .balance').textContent`, row(blue.ID))), "Pixel Garage's starting balance")
	assert.Equal(t, []string{"", red.ID, blue.ID}, eval[[]string](b, `[...document.querySelectorAll('#scope option')].map(o => o.value)`))
	assert.Equal(t, "Whole server", eval[string](b, `document.querySelector('#scope option:checked').textContent`))
	b.screenshot("sandboxes")

	// Workspace cards and selectors mark the sandboxes.
	b.panel("workspaces")
	b.visible("red's card is a sandbox's", fmt.Sprintf(`.card.sandbox[data-sandbox="%s"] .badge.sbx`, red.ID))
	assert.Equal(t, 2, eval[int](b, `document.querySelectorAll('#workspace-cards .card.sandbox').length`))
	assert.Equal(t, 2, eval[int](b, `document.querySelectorAll('#job-ws optgroup[label="Sandboxes"] option').length`))
	assert.Contains(t, eval[string](b, fmt.Sprintf(`document.querySelector('#job-ws option[value="%d"]').textContent`, blue.WorkspaceID)), "sandbox")

	// The whole server's journal holds every request.
	b.panel("journal")
	b.until("the journal holds the three requests", `document.querySelectorAll('#journal-table tbody tr').length === 3`)

	// The scope, chosen by keyboard: the journal shows red's request alone.
	b.do("focus the scope", chromedp.Focus(chromedp.CSS(`#scope`)))
	b.do("choose red with the keyboard", chromedp.KeyEvent(kb.ArrowDown))
	b.until("the scope is red", fmt.Sprintf(`document.querySelector('#scope').value === %q`, red.ID))
	b.until("the journal shows red's request alone", fmt.Sprintf(
		`(() => { const rows = [...document.querySelectorAll('#journal-table tbody tr')]; return rows.length === 1 && rows[0].dataset.request === %q })()`, redRequests[0].ID))
	assert.Contains(t, eval[string](b, `document.querySelector('#panel-journal .scope-note.on').textContent`), red.ID, "the journal says it is scoped")
	assert.Equal(t, red.ID, eval[string](b, `sessionStorage.getItem('mediamock.scope')`))
	b.screenshot("sandbox-journal")

	// Jobs, the library and the ledger show red's workspace.
	ws := fmt.Sprint(red.WorkspaceID)
	b.panel("jobs")
	b.visible("red's job", fmt.Sprintf(`#job-table tr[data-id="%d"]`, redAsset))
	assert.Equal(t, ws, eval[string](b, `document.querySelector('#job-ws').value`))
	assert.True(t, eval[bool](b, `document.querySelector('#job-ws').disabled`), "the scope holds the filter")
	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll('#job-table tbody tr').length`), "red's job alone")
	b.panel("library")
	b.visible("red's asset in the library", fmt.Sprintf(`#library-grid [data-asset="%d"]`, redAsset))
	assert.True(t, eval[bool](b, fmt.Sprintf(`[...document.querySelectorAll('#library-grid .tile .sub')].every(s => s.textContent.endsWith('ws %s'))`, ws)), "red's library alone")
	b.panel("publications")
	assert.Equal(t, ws, eval[string](b, `document.querySelector('#publication-ws').value`))
	b.panel("ledger")
	assert.Equal(t, ws, eval[string](b, `document.querySelector('#ledger-ws').value`))

	// Coverage is red's: its generation, not the account reads.
	b.panel("coverage")
	b.visible("red's coverage", `#coverage-table [title^="createGeneration 201:"]`)
	assert.Equal(t, "1", eval[string](b, `document.querySelector('#coverage-table [title^="createGeneration 201:"]').textContent`))
	assert.Equal(t, "0", eval[string](b, `document.querySelector('#coverage-table [title^="getAccount 200:"]').textContent`))

	// Faults: the panel says whose; a global fault is noted; a fail-next
	// rule set from the page lands in red alone.
	rate := 0.5
	require.NoError(t, srv.SetFailureRate(&rate))
	b.panel("faults")
	b.visible("the faults' scope", fmt.Sprintf(`#faults-scope[data-scope="sandbox %s"]`, red.ID))
	b.visible("the global fault is noted", `#faults-global`)
	b.do("add a fail-next rule from the page",
		chromedp.SetValue(chromedp.CSS(`#fault-fail-next select[name="modality"]`), "video"),
		chromedp.Click(chromedp.CSS(`#fault-fail-next button[type="submit"]`)))
	b.visible("the rule is active", `#faults-active li`)
	b.screenshot("sandbox-faults")
	redFaults, err := red.Faults()
	require.NoError(t, err)
	require.Len(t, redFaults.FailNext, 1, "red's fault")
	assert.Equal(t, "video", redFaults.FailNext[0].Modality)
	global, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, global.FailNext, "not the whole server's")
	blueFaults, err := blue.Faults()
	require.NoError(t, err)
	assert.Empty(t, blueFaults.FailNext, "not blue's")
	require.NoError(t, srv.SetFailureRate(nil))

	// The scope survives a new list (a sandbox made elsewhere) and a reload.
	green, err := srv.NewSandbox(mediamock.SandboxSpec{Name: "suite green"})
	require.NoError(t, err)
	b.until("the scope lists green", `document.querySelectorAll('#scope option').length === 4`)
	assert.Equal(t, red.ID, eval[string](b, `document.querySelector('#scope').value`))
	b.do("reload the page", chromedp.Navigate(srv.URL()+"/_mock/ui/?again#journal"))
	b.visible("the journal shows", `#panel-journal[data-loaded]`)
	assert.Equal(t, red.ID, eval[string](b, `document.querySelector('#scope').value`))
	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll('#journal-table tbody tr').length`), "still red's journal")
	b.noConsoleErrors()

	// Run finishes red's job now, and the clock stays.
	now := srv.Now()
	b.panel("sandboxes")
	b.press("run red", row(red.ID)+` button[data-action="run"]`)
	b.until("the run is done", `document.querySelector('#toast').textContent.includes('applied now')`)
	a, err := srv.Asset(uint64(redAsset))
	require.NoError(t, err)
	assert.Contains(t, []string{"completed", "failed"}, a.Status, "red's job is finished")
	assert.Equal(t, now, srv.Now(), "the shared clock did not move")

	// Reset puts red back to its start.
	b.press("reset red", row(red.ID)+` button[data-action="reset"]`)
	b.until("the reset is done", `document.querySelector('#toast').textContent.includes('back to its start')`)
	assert.Empty(t, red.Journal(mediamock.JournalFilter{}), "its journal is empty")
	redFaults, err = red.Faults()
	require.NoError(t, err)
	assert.Empty(t, redFaults.FailNext, "its faults are gone")
	_, err = srv.Asset(uint64(redAsset))
	assert.Error(t, err, "what it made is gone")
	b.panel("journal")
	b.until("the page shows its empty journal", `document.querySelectorAll('#journal-table tbody tr').length === 0`)

	// Delete asks first: Escape keeps blue, the dialog's Delete removes it.
	b.panel("sandboxes")
	b.press("delete blue", row(blue.ID)+` button[data-action="delete"]`)
	b.visible("the page asks", `#confirm-dialog[open]`)
	assert.Equal(t, "Cancel", eval[string](b, `document.activeElement.textContent`), "Cancel has the focus")
	b.do("change one's mind", chromedp.KeyEvent(kb.Escape))
	b.until("the dialog closed", `!document.querySelector('#confirm-dialog').open`)
	assert.Contains(t, sandboxIDs(srv), blue.ID, "blue is kept")
	b.press("delete blue", row(blue.ID)+` button[data-action="delete"]`)
	b.click("confirm", `#confirm-ok`)
	b.until("blue leaves the list", fmt.Sprintf(`!document.querySelector('%s')`, row(blue.ID)))
	assert.NotContains(t, sandboxIDs(srv), blue.ID, "blue is deleted")

	// Deleting the chosen sandbox leaves the scope for the whole server.
	b.press("delete red", row(red.ID)+` button[data-action="delete"]`)
	b.click("confirm", `#confirm-ok`)
	b.until("the scope is the whole server", `document.querySelector('#scope').value === '' && !sessionStorage.getItem('mediamock.scope')`)
	assert.Equal(t, []string{green.ID}, sandboxIDs(srv))
	assert.False(t, eval[bool](b, `document.querySelector('#job-ws').disabled`), "the filters are free again")

	// Create from the page.
	b.do("create a sandbox from the page",
		chromedp.SetValue(chromedp.CSS(`#sandbox-create input[name="name"]`), "made in the page"),
		chromedp.SetValue(chromedp.CSS(`#sandbox-create input[name="from"]`), "Northwind Media"),
		chromedp.Click(chromedp.CSS(`#sandbox-create button[type="submit"]`)))
	b.until("it is listed", `[...document.querySelectorAll('#sandbox-table tbody tr')].some(r => r.innerText.includes('made in the page'))`)
	list := srv.Engine().Sandboxes()
	require.Len(t, list, 2)
	assert.Equal(t, "made in the page", list[1].Name)
	assert.Equal(t, "Northwind Media", list[1].From)
	b.choose("choose it with the selector", `#scope`, list[1].ID)
	b.until("its row is marked", fmt.Sprintf(`document.querySelector('%s button[data-action="scope"]').getAttribute('aria-pressed') === 'true'`, row(list[1].ID)))
	b.noConsoleErrors()

	// A phone's width: nothing is wider than the screen.
	b.do("a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, name := range []string{"sandboxes", "journal", "faults", "jobs"} {
		b.panel(name)
		assert.True(t, eval[bool](b, `document.documentElement.scrollWidth <= window.innerWidth`), "%s fits a phone's width", name)
		b.screenshot("phone-sandbox-" + name)
	}
	b.noConsoleErrors()

	// A sandbox deleted elsewhere: no event tells of it, but the first call
	// in its scope finds it gone, and the page falls back to the whole
	// server. The browser logs that call's 404, and nothing else.
	b.do("back to a desktop's width", chromedp.EmulateViewport(1280, 800))
	b.choose("choose green", `#scope`, green.ID)
	b.panel("coverage")
	require.NoError(t, green.Delete())
	b.panel("journal")
	b.until("the scope is the whole server", `document.querySelector('#scope').value === ''`)
	b.until("the journal is the whole server's", `document.querySelector('#panel-journal[data-loaded]') && document.querySelectorAll('#journal-table tbody tr').length > 0`)
	b.mu.Lock()
	assert.NotEmpty(t, b.problems, "the page asked in the sandbox's scope")
	for _, p := range b.problems {
		assert.True(t, strings.Contains(p, "404") && strings.Contains(p, "sandbox="+green.ID), "only the call that found the sandbox gone: %s", p)
	}
	logged := len(b.problems)
	b.mu.Unlock()
	assert.False(t, slices.Contains(sandboxIDs(srv), green.ID))

	// A reset of the whole server, which the stream tells of, takes every
	// sandbox: the scope is the whole server before any call is made in it.
	gold, err := srv.NewSandbox(mediamock.SandboxSpec{Name: "suite gold"})
	require.NoError(t, err)
	b.until("gold is listed", fmt.Sprintf(`!!document.querySelector('#scope option[value=%q]')`, gold.ID))
	b.choose("choose gold", `#scope`, gold.ID)
	b.until("the journal is gold's", `document.querySelector('#panel-journal .scope-note.on') && document.querySelectorAll('#journal-table tbody tr').length === 0`)
	require.NoError(t, srv.Reset())
	require.Empty(t, sandboxIDs(srv), "a reset takes the sandboxes")
	b.until("the scope is the whole server", `document.querySelector('#scope').value === '' && document.querySelectorAll('#scope option').length === 1`)
	b.mu.Lock()
	assert.Len(t, b.problems, logged, "no call failed: %q", b.problems)
	b.mu.Unlock()
}

// press clicks the element css names as soon as it is there, in one step
// of the page's own thread: the sandbox list is drawn again whenever the
// event stream reports a change, and a node found a moment before may be
// gone when a click from outside reaches it.
func (b *browser) press(what, css string) {
	b.t.Helper()
	b.until(what, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, css))
}
