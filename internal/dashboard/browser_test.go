package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// dashboardPNG names the file the jobs panel's screenshot is written to,
// the picture the README and docs/reference/dashboard.md show
// (docs/dashboard.png): a path from the repository's root, or absolute.
// go generate ./... does not write it: its pixels depend on the browser
// and its fonts, so no test without a browser can hold it.
const dashboardPNG = "MEDIAMOCK_DASHBOARD_PNG"

// browserPath finds Chromium: CHROMIUM_PATH, else the usual places.
func browserPath() string {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is one headless Chromium tab that remembers every console error,
// uncaught exception and browser log error of its page.
type browser struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := browserPath()
	if _, err := os.Stat(path); path == "" || err != nil {
		if os.Getenv(dashboardPNG) != "" {
			t.Fatalf("%s asks for the dashboard's screenshot, and there is no Chromium to take it: install it (apt-get install chromium) or set CHROMIUM_PATH", dashboardPNG)
		}
		t.Skip("no Chromium to drive: install it (apt-get install chromium) or set CHROMIUM_PATH; scripts/dashboard-check does both")
	}
	profile := t.TempDir() // removed after the browser is gone: cleanups run last first
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("force-color-profile", "srgb"), chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"), chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 800))
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	b := &browser{t: t, ctx: ctx}
	messages := chromedp.Console(ctx) // starts the browser
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	b.do("set the window", chromedp.EmulateViewport(1280, 800))
	return b
}

// do runs actions, each step bounded in time.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.failed()
		require.NoError(b.t, err, what)
	}
}

// failed leaves what the page showed: a screenshot (with
// MEDIAMOCK_SCREENSHOTS) and the text of the panel shown, in the log.
func (b *browser) failed() {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		if dir := os.Getenv("MEDIAMOCK_SCREENSHOTS"); dir != "" {
			os.WriteFile(filepath.Join(dir, "failure.png"), png, 0o644)
		}
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('.panel:not([hidden])') || document.body).innerText`))
	toast, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#toast').hidden ? '' : document.querySelector('#toast').textContent`))
	b.t.Logf("the page showed:\n%s\ntoast: %s", text, toast)
	b.mu.Lock()
	b.t.Logf("console errors: %q", b.problems)
	b.mu.Unlock()
}

// eval evaluates JavaScript in the page.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(b.t, err, js)
	return v
}

// until waits, polling in the page, for a JavaScript condition.
func (b *browser) until(what, js string) {
	b.t.Helper()
	b.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool](js, chromedp.WithPollingTimeout(15*time.Second))(ctx, t)
		return err
	}))
}

func (b *browser) visible(what, css string) {
	b.t.Helper()
	b.do(what, chromedp.WaitVisible(chromedp.CSS(css)))
}

func (b *browser) click(what, css string) {
	b.t.Helper()
	b.do(what, chromedp.Click(chromedp.CSS(css)))
}

// panel shows a panel the way a person does: with its tab.
func (b *browser) panel(name string) {
	b.t.Helper()
	b.click("open "+name, fmt.Sprintf(`.tabs a[href="#%s"]`, name))
	b.visible(name+" shows", fmt.Sprintf(`#panel-%s[data-loaded]`, name))
}

// screenshot saves the viewport into $MEDIAMOCK_SCREENSHOTS, when set.
func (b *browser) screenshot(name string) []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(b.t, err)
	if dir := os.Getenv("MEDIAMOCK_SCREENSHOTS"); dir != "" {
		require.NoError(b.t, os.MkdirAll(dir, 0o755))
		require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	}
	return png
}

func (b *browser) noConsoleErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(b.t, b.problems, "the page wrote errors to the console")
}

func firstAsset(t *testing.T, gen map[string]any) int {
	t.Helper()
	assets, ok := gen["assets"].([]any)
	require.True(t, ok, "%v", gen)
	return int(assets[0].(map[string]any)["id"].(float64))
}

// The dashboard in a real browser: a job created over the API appears,
// moves on the page's clock button, shows its picture; a job failed from
// the page shows its refund; every panel renders without a console error,
// at 1280x800 and at a phone's width, and is reachable from the keyboard.
func TestDashboardInBrowser(t *testing.T) {
	const token = "dash-token"
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) {
		o.Clock = mediamock.ClockManual
		o.ControlToken = token
	})

	b.do("open the dashboard", chromedp.Navigate(srv.URL()+"/_mock/ui/?token="+token+"#jobs"))
	b.visible("the event stream is live", `#live[data-state="live"]`)
	b.visible("the jobs panel shows", `#panel-jobs[data-loaded]`)
	assert.Equal(t, "", eval[string](b, `location.search`), "the token leaves the address bar")
	assert.Equal(t, token, eval[string](b, `sessionStorage.getItem('mediamock.controlToken')`))

	// A generation created over the API appears and moves with the page's clock.
	id := firstAsset(t, testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a red fox in the snow"}`))
	row := fmt.Sprintf(`#job-table tr[data-id="%d"]`, id)
	b.visible("the new job appears", row+`[data-status="queued"]`)
	b.click("advance the clock a minute", `#advance-minute`)
	b.visible("the job completes", row+`[data-status="completed"]`)
	assert.Contains(t, eval[string](b, `document.querySelector('#clock-now').textContent`), "09:01:00")

	// Its picture loads in the library.
	b.panel("library")
	b.until("the thumbnail loads", fmt.Sprintf(`(() => { const i = document.querySelector('[data-asset="%d"] img'); return !!i && i.complete && i.naturalWidth > 0 })()`, id))
	assert.Equal(t, srv.URL()+"/files/", eval[string](b, fmt.Sprintf(`document.querySelector('a[data-asset="%d"]').href.slice(0, %d)`, id, len(srv.URL())+7)), "a click opens the file")
	for _, e := range srv.Journal(mediamock.JournalFilter{PathPrefix: "/files/"}) {
		t.Errorf("the page's own file request %s is in the journal", e.Path)
	}

	// A job failed from the page is refunded.
	id2 := firstAsset(t, testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a paper kite over the dunes [mock:stuck]"}`))
	b.panel("jobs")
	row2 := fmt.Sprintf(`#job-table tr[data-id="%d"]`, id2)
	b.visible("the second job appears", row2)
	job2 := eval[string](b, fmt.Sprintf(`document.querySelector('%s').dataset.job`, row2))
	b.click("fail it from the page", row2+` button[data-action="fail"]`)
	b.visible("it fails", row2+`[data-status="failed"]`)
	b.panel("ledger")
	b.visible("the refund is in the ledger", fmt.Sprintf(`#ledger-table tr[data-type="refund"][data-job="%s"]`, job2))
	b.noConsoleErrors()

	// A world worth a look: every kind of job, an Encore creation, a
	// publication, an error or two in the journal, a fault.
	for _, body := range []string{
		`{"modality":"video","model_id":"veo-3-fast","prompt":"a drone shot over a lighthouse at dawn","duration":8}`,
		`{"modality":"audio","model_id":"openai-tts-1","prompt":"Welcome to Acme Studio. Today we launch the spring collection."}`,
		`{"modality":"3d","model_id":"meshy-5","prompt":"a low-poly teapot"}`,
		`{"modality":"image","model_id":"seedream-4","prompt":"a watercolor city skyline","count":2}`,
	} {
		testkit.API(t, srv, "POST", "/generations", body)
	}
	testkit.API(t, srv, "POST", "/encore/creations", `{"effect":"golden-hour","image_url":"https://example.com/portrait.jpg"}`)
	testkit.API(t, srv, "POST", "/social/publications", fmt.Sprintf(`{"asset_ids":[%d],"caption":"Spring is here [mock:fail-platform=linkedin]","platforms":["instagram","linkedin"]}`, id))
	testkit.API(t, srv, "GET", "/generations/999999", "")
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4"}`)
	b.click("advance the clock to the next event", `#advance-next`)
	b.until("the clock moved to the next event", `document.querySelector('#clock-now').dataset.now > '2026-01-05T09:01:00+00:00'`)
	assert.True(t, eval[bool](b, `document.querySelector('#toast').hidden`), eval[string](b, `document.querySelector('#toast').textContent`))
	b.click("advance the clock a minute", `#advance-minute`)
	testkit.API(t, srv, "POST", "/generations", `{"modality":"video","model_id":"kling-2.5-turbo","prompt":"a paper boat in the rain","duration":5}`)

	b.panel("faults")
	b.do("add a fault from the page",
		chromedp.SetValue(chromedp.CSS(`#fault-fail-next select[name="modality"]`), "video"),
		chromedp.Click(chromedp.CSS(`#fault-fail-next button[type="submit"]`)))
	b.visible("the fault is active", `#faults-active li`)
	b.do("fail deliveries to a platform from the page",
		chromedp.SetValue(chromedp.CSS(`#fault-platform select`), "threads"),
		chromedp.Click(chromedp.CSS(`#fault-platform button[type="submit"]`)))
	b.visible("the platform fault is active", `#faults-active button[aria-label="Stop failing threads"]`)
	b.click("remove it", `#faults-active button[aria-label="Stop failing threads"]`)
	b.until("it is gone", `!document.querySelector('#faults-active button[aria-label="Stop failing threads"]')`)
	faults, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, faults.FailPlatforms)
	assert.Len(t, faults.FailNext, 1)

	shots := map[string][]byte{}
	for _, name := range []string{"workspaces", "jobs", "library", "publications", "clock", "journal", "ledger", "coverage", "faults"} {
		if name == "library" {
			// After the jobs' picture: every job but the stuck one completes.
			require.NoError(t, srv.Advance(10*time.Minute))
		}
		b.panel(name)
		switch name {
		case "library":
			// Videos, audio and 3D models show the pictures the dashboard
			// draws: a poster, a waveform, a view of the model.
			for _, kind := range []string{"video", "voice", "model3d"} {
				b.until("a "+kind+" preview loads", fmt.Sprintf(`(() => { const i = document.querySelector('#library-grid [data-kind="%s"][data-status="completed"] img.preview'); return !!i && i.complete && i.naturalWidth > 0 })()`, kind))
			}
			b.until("every thumbnail loads", `[...document.querySelectorAll('#library-grid img')].every(i => i.complete && i.naturalWidth > 0)`)
		case "publications":
			b.visible("the publication's deliveries", `#publication-table .deliveries a`)
		case "journal":
			b.click("show a request's bodies", `#journal-table tr[data-op="createPublication"] button`)
			b.visible("its bodies show", `#journal-detail pre`)
		case "coverage":
			b.visible("untried statuses stand out", `#coverage-table .cell.untried`)
		}
		shots[name] = b.screenshot(name)
	}
	if png := os.Getenv(dashboardPNG); png != "" {
		if !filepath.IsAbs(png) {
			png = filepath.Join("..", "..", png)
		}
		require.NoError(t, os.WriteFile(png, shots["jobs"], 0o644))
	}

	// The keyboard reaches the tabs and the clock's buttons, and shows where it is.
	b.do("start from the top", chromedp.Navigate(srv.URL()+"/_mock/ui/?from=keyboard#workspaces"))
	b.visible("the page is back", `#panel-workspaces[data-loaded]`)
	var reached []string
	for range 24 {
		b.do("press Tab", chromedp.KeyEvent("\t"))
		here := eval[string](b, `(() => { const e = document.activeElement; return e.id || e.getAttribute('href') || e.textContent.trim() })()`)
		reached = append(reached, here)
		if here == "#jobs" {
			break
		}
	}
	assert.Contains(t, reached, "advance-minute", "the clock's buttons are on the way")
	require.Equal(t, "#jobs", reached[len(reached)-1], "Tab reaches the tabs: %q", reached)
	assert.Equal(t, "solid", eval[string](b, `getComputedStyle(document.activeElement).outlineStyle`), "focus is visible")
	b.do("open a tab by keyboard", chromedp.KeyEvent("\r"))
	b.visible("the tab opened", `#panel-jobs[data-loaded]`)
	assert.Zero(t, eval[int](b, `document.querySelectorAll('div[onclick], span[onclick], td[onclick], [tabindex]:not(main):not(a):not(button)').length`), "what acts is a button or a link")

	// A phone's width: no panel is wider than the screen.
	b.do("a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, name := range []string{"workspaces", "jobs", "library", "journal", "faults"} {
		b.panel(name)
		assert.True(t, eval[bool](b, `document.documentElement.scrollWidth <= window.innerWidth`), "%s fits a phone's width", name)
		b.screenshot("phone-" + name)
	}
	b.noConsoleErrors()
}

// In real mode the page asks before a jump (a jump leaves the clock ahead
// of the wall) and offers Resync, which puts it back on the wall clock.
func TestDashboardRealClockAsksAndResyncs(t *testing.T) {
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockReal })
	b.do("open the dashboard", chromedp.Navigate(srv.URL()+"/_mock/ui/#clock"))
	b.visible("the event stream is live", `#live[data-state="live"]`)
	assert.True(t, eval[bool](b, `document.querySelector('#clock-resync').hidden`), "nothing to resync yet")
	before := srv.Now()

	eval[bool](b, `window.asked = 0; window.confirm = () => { window.asked++; return false; }; true`)
	b.click("advance an hour, declined", `#advance-hour`)
	b.until("the page asked", `window.asked === 1`)
	assert.WithinDuration(t, before, srv.Now(), 30*time.Minute, "a declined jump does not move the clock")

	eval[bool](b, `window.confirm = () => { window.asked++; return true; }; true`)
	b.click("advance an hour, accepted", `#advance-hour`)
	b.until("the page asked again", `window.asked === 2`)
	testkit.Poll(t, "the clock jumped", func() bool { return srv.Now().Sub(time.Now()) > 50*time.Minute })
	b.visible("Resync shows, with the offset", `#clock-resync:not([hidden])`)
	assert.Contains(t, eval[string](b, `document.querySelector('#clock-resync').textContent`), "+1h")

	b.click("resync", `#clock-resync`)
	testkit.Poll(t, "the clock is back on the wall", func() bool { return srv.Now().Sub(time.Now()).Abs() < 5*time.Second })
	b.until("Resync hides again", `document.querySelector('#clock-resync').hidden`)
	b.noConsoleErrors()
}

// The jobs table: times with their dates, no start time while a job is
// queued, asset ids and Encore ids in columns of their own.
func TestDashboardJobsTableReadsRight(t *testing.T) {
	b := newBrowser(t)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	b.do("open the dashboard", chromedp.Navigate(srv.URL()+"/_mock/ui/#jobs"))
	b.visible("the jobs panel shows", `#panel-jobs[data-loaded]`)

	id := firstAsset(t, testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a red fox"}`))
	row := fmt.Sprintf(`#job-table tr[data-id="%d"]`, id)
	b.visible("the queued job appears", row+`[data-status="queued"]`)
	cells := eval[[]string](b, `[...document.querySelectorAll('`+row+` td')].map((td) => td.textContent)`)
	require.GreaterOrEqual(t, len(cells), 10)
	assert.Equal(t, fmt.Sprint(id), cells[0], "the asset id")
	assert.Equal(t, "", cells[1], "no Encore id for a generation")
	assert.Equal(t, "2026-01-05 09:00:00", cells[7], "the created time with its date")
	assert.Equal(t, "", cells[8], "a queued job has not started")

	enc := testkit.API(t, srv, "POST", "/encore/creations", `{"effect":"golden-hour","asset_id":1}`)
	encID := int(enc["id"].(float64))
	erow := fmt.Sprintf(`#job-table tr[data-id="%d"]`, encID)
	b.until("the Encore job appears", fmt.Sprintf(`[...document.querySelectorAll('%s')].some((tr) => tr.querySelector('.encore-id').textContent === '%d')`, erow, encID))
	assert.Equal(t, fmt.Sprint(encID), eval[string](b, fmt.Sprintf(`[...document.querySelectorAll('%s .encore-id')].map((td) => td.textContent).find((s) => s === '%d')`, erow, encID)))
	b.noConsoleErrors()
}
