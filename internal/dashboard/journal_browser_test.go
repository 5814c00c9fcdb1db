package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// Until its first data, a panel says it is loading: the first moments of
// the page, held still by pausing the jobs' read in the browser, show a
// loading line and no empty table's words; once the read goes on, the
// jobs show and the loading line goes.
func TestDashboardLoadsBeforeItShows(t *testing.T) {
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a red fox in the snow"}`)

	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	paused := chromedp.Events(ctx, fetch.RequestPaused) // subscribed before the page asks
	_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/_mock/jobs*"}}})
	require.NoError(t, err)
	b.do("open the dashboard", chromedp.Navigate(srv.URL()+"/_mock/ui/#jobs"))
	var held fetch.EventRequestPaused
	for ev, err := range paused {
		require.NoError(t, err, "the jobs are read")
		held = ev
		break
	}
	require.Contains(t, held.Request.URL, "/_mock/jobs")

	b.visible("the panel says it is loading", `#panel-jobs > .loading`)
	assert.Equal(t, "Loading jobs…", eval[string](b, `document.querySelector('#panel-jobs > .loading').textContent`))
	assert.Equal(t, "true", eval[string](b, `document.querySelector('#panel-jobs').getAttribute('aria-busy')`))
	assert.True(t, eval[bool](b, `document.querySelector('#jobs-empty').hidden`), "no \"no jobs yet\" before the jobs are read")
	assert.Zero(t, eval[int](b, `document.querySelectorAll('#job-table tbody tr').length`))
	b.screenshot("first-second")

	_, err = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: held.RequestID})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, fetch.Disable, cdp.Empty{})
	require.NoError(t, err)
	b.visible("the jobs show", `#panel-jobs[data-loaded] #job-table tbody tr`)
	assert.False(t, eval[bool](b, `(() => { const l = document.querySelector('#panel-jobs > .loading'); return !!l.offsetParent })()`), "the loading line is gone")
	assert.False(t, eval[bool](b, `document.querySelector('#panel-jobs').hasAttribute('aria-busy')`))
	b.noConsoleErrors()
}

// The journal tab says how many requests the journal holds (and how many
// were recorded), and pages through every one of them, newest first.
func TestDashboardJournalPagesThroughAll(t *testing.T) {
	const size, sent = 250, 260
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.JournalSize = size })
	for range sent {
		status, _, _ := testkit.REST(t, srv, mediamock.KeyBusiness, "GET", "/account", nil) // 600 a minute
		require.Equal(t, http.StatusOK, status)
	}

	b.do("open the journal", chromedp.Navigate(srv.URL()+"/_mock/ui/#journal"))
	b.visible("the journal shows", `#panel-journal[data-loaded]`)
	countText := func() string { return eval[string](b, `document.querySelector('#journal-count').textContent`) }
	assert.Equal(t, "Requests 1–100 of the 250 the journal holds, newest first (260 recorded: it keeps the last 250).", countText())
	assert.True(t, eval[bool](b, `document.querySelector('#journal-newer').disabled`))
	seqs := func() []int {
		return eval[[]int](b, `[...document.querySelectorAll('#journal-table tbody tr')].map((tr) => +tr.dataset.seq)`)
	}
	seen := map[int]bool{}
	for page, want := range []string{"1–100", "101–200", "201–250"} {
		if page > 0 {
			b.click("an older page", `#journal-older`)
			b.until("the page "+want+" shows", fmt.Sprintf(`document.querySelector('#journal-count').textContent.startsWith('Requests %s ')`, want))
		}
		for _, s := range seqs() {
			assert.False(t, seen[s], "seq %d on two pages", s)
			seen[s] = true
		}
	}
	assert.Len(t, seen, size, "every request the journal holds, once")
	for s := sent - size + 1; s <= sent; s++ {
		assert.True(t, seen[s], "seq %d", s)
	}
	assert.True(t, eval[bool](b, `document.querySelector('#journal-older').disabled`), "the last page")
	assert.False(t, eval[bool](b, `document.querySelector('#journal-newer').disabled`))
	b.screenshot("journal-last-page")

	b.click("back a page", `#journal-newer`)
	b.until("the page 101–200 shows again", `document.querySelector('#journal-count').textContent.startsWith('Requests 101–200 ')`)
	b.noConsoleErrors()
}

// An answer a delivery fault cut is marked as such in the journal's list
// and in its detail: a creation reset on its way is no plain green 201.
// The coverage's legend says what its cells count.
func TestDashboardMarksACutAnswer(t *testing.T) {
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "reset", Operation: "createGeneration", First: 1})
	require.NoError(t, err)
	req, err := http.NewRequest("POST", srv.BaseURL()+"/generations", strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"a red fox"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the answer came: %s", resp.Status)
	}
	testkit.API(t, srv, "GET", "/account", "")
	cut := srv.Journal(mediamock.JournalFilter{Operation: "createGeneration"})
	require.Len(t, cut, 1)
	require.True(t, cut[0].AnswerCut)

	b.do("open the journal", chromedp.Navigate(srv.URL()+"/_mock/ui/#journal"))
	row := fmt.Sprintf(`#journal-table tr[data-request="%s"]`, cut[0].ID)
	b.visible("the cut answer is listed", row+`[data-cut="true"]`)
	assert.Equal(t, "201cut", eval[string](b, fmt.Sprintf(`document.querySelector('%s td.num.c2').textContent`, row)))
	assert.Contains(t, eval[string](b, fmt.Sprintf(`document.querySelector('%s .cut').title`, row)), "reset")
	assert.Zero(t, eval[int](b, `document.querySelectorAll('#journal-table tr:not([data-op="createGeneration"]) .cut').length`), "the other answer came whole")
	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll('#journal-table tr[data-cut]').length`), "one row is marked")
	assert.Equal(t, "rgb(21, 128, 61)", eval[string](b, `getComputedStyle(document.querySelector('#journal-table tr[data-op="getAccount"] td.num.c2')).color`),
		"an answer that came whole is green")
	b.click("show it", row+` button`)
	b.visible("its detail says it was cut", `#journal-detail .cut-note`)
	assert.Contains(t, eval[string](b, `document.querySelector('#journal-detail .cut-note').textContent`),
		"Cut on its way by a fault (reset): the client never got it whole.")
	assert.Contains(t, eval[string](b, `document.querySelector('#journal-detail').textContent`), "written, cut on its way")
	b.screenshot("journal-cut-answer")

	b.panel("coverage")
	legend := eval[string](b, `document.querySelector('#coverage-legend').innerText`)
	assert.Contains(t, legend, "Each cell is how many answers an operation (a row) gave with a status (a column)")
	assert.Contains(t, legend, "no answer had yet")
	assert.Contains(t, legend, "does not declare")
	b.noConsoleErrors()
}
