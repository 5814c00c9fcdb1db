// Command compare measures, in one run on one machine, this server
// (non-durable and durable), a bare net/http server answering a fixed body
// of the same size as the server's list page (and one of 1 KB), and Prism
// when npx can install it. Every server runs at once. Each is loaded in
// turn by the program's own generator; then, when wrk is installed, wrk
// loads them all in rounds, one after the other, and the medians are
// kept: the ratios and the targets rest on wrk's figures. It prints one
// table (requests per second by both generators, p50, p99, start time,
// RSS idle, after and peak, the ratios to the bare servers) and each
// target next to what it measured, and the CPU time each server spent
// per request of every load (list page, creation, MCP tool call without a
// session and in one), read from /proc/<pid>/stat before and after the
// load and divided by the requests it served, beside the bare servers'.
//
// A measurement holds only on a quiet machine: before each round it reads
// the 1-minute load average and waits (up to -settle) for it to fall under
// -max-load; a round that begins above it marks the run NOT QUIET, and
// -require-quiet refuses to report one (exit status 2).
//
//	go run ./bench/compare                 # 8 s per load, 32 connections, 3 rounds of wrk
//	go run ./bench/compare -d 4s -prism=false -rounds 1
//
// It starts every server on loopback and stops them all when done.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

const token = "mk_test_bench"

// fixture is a workspace of 10,000 assets whose rate limit never bites.
const fixture = `{"extends": "default",
  "plans": {"bench": {"rate_limit_per_minute": 1000000000, "publishing_allowed": true}},
  "workspaces": [{"name": "Bench", "plan": "bench", "credits": 1000000000000,
    "api_keys": [{"token": "` + token + `", "scopes": ["read", "generate", "publish"]}],
    "assets": {"count": 10000}}]}`

const createBody = `{"modality":"image","model_id":"imagen-4","prompt":"a load test of lighthouses","aspect_ratio":"16:9"}`

type result struct {
	name               string
	listRPS, createRPS float64
	listP50, listP99   time.Duration
	createP99          time.Duration
	mcpRPS             float64
	mcpP99             time.Duration
	// mcpSessionRPS is the same tool call inside a session (2025-11-25).
	mcpSessionRPS float64
	mcpSessionP99 time.Duration
	// The same loads by wrk, when it is installed.
	wrkList, wrkCreate, wrkMCP, wrkMCPSession wrkRun
	// ownList, ownCreate, ownMCP and ownMCPSession are the CPU cost per
	// request of each load by the program's own generator (its rates are
	// the fields above).
	ownList, ownCreate, ownMCP, ownMCPSession wrkRun

	start            time.Duration
	rssIdle, rssPeak int64 // KiB
	rssAfter         int64 // KiB, after the loads
	skipped          string
}

func main() {
	dur := flag.Duration("d", 8*time.Second, "duration of each load")
	conc := flag.Int("c", 32, "concurrent connections")
	prism := flag.Bool("prism", true, "also measure Prism (installed with npx)")
	pollN := flag.Int("polls", 10000, "long polls held open at once (0: none)")
	rounds := flag.Int("rounds", 3, "rounds of wrk loads over every server (medians kept)")
	maxLoad := flag.Float64("max-load", 1.0, "the 1-minute load average above which a round does not begin on a quiet machine")
	settle := flag.Duration("settle", 90*time.Second, "how long to wait before a round for the load average to fall under -max-load")
	requireQuiet := flag.Bool("require-quiet", false, "refuse to report a run whose rounds did not all begin on a quiet machine (exit status 2)")
	baseline := flag.String("baseline", "", "also measure the mock built from this git revision (a commit, a tag, main~3), loaded in the same rounds as today's, and compare the two")
	flag.Parse()
	gate := newQuietGate(*maxLoad, *settle)

	dir, err := os.MkdirTemp("", "mediamock-compare-")
	check(err)
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "mockserver")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	check(build.Run())
	fix := filepath.Join(dir, "bench.json")
	check(os.WriteFile(fix, []byte(fixture), 0o600))

	var targets []*target
	for _, durable := range []bool{false, true} {
		name := "mediamock"
		if durable {
			name += " --durable"
		}
		addr := freeAddr()
		args := []string{"--addr", addr, "--db", filepath.Join(dir, name+".db"), "--reset", "--fixtures", fix,
			"--clock", "manual", "--log-format", "json"}
		if durable {
			args = append(args, "--durable")
		}
		targets = append(targets, &target{name: name, cmd: exec.Command(bin, args...), url: "http://" + addr, p: mockPaths})
	}
	if *baseline != "" {
		old := buildRevision(dir, *baseline)
		addr := freeAddr()
		targets = append(targets, &target{name: baselineName + *baseline, url: "http://" + addr, p: mockPaths,
			cmd: exec.Command(old, "--addr", addr, "--db", filepath.Join(dir, "baseline.db"), "--reset", "--fixtures", fix, "--clock", "manual", "--log-format", "json")})
	}
	page := fetchPage(bin, dir, fix)
	bare := bareServer(page)
	targets = append(targets, &target{name: fmt.Sprintf("bare net/http (%d B body)", len(page)), cmd: bare, url: "http://" + bare.Env[0][len("BARE_ADDR="):], p: paths{ready: "/", list: "/"}})
	small := bareServer(bytes.Repeat([]byte("x"), 1024))
	targets = append(targets, &target{name: "bare net/http (1 KB body)", cmd: small, url: "http://" + small.Env[0][len("BARE_ADDR="):], p: paths{ready: "/", list: "/", create: "/"}})
	if *prism {
		targets = append(targets, prismTarget(dir))
	}
	// Every server runs at once; each is loaded in turn by the program's
	// own generator, then wrk loads them in rounds, one after the other,
	// so that a machine whose speed drifts over minutes weighs on every
	// server alike (the medians of the rounds are kept).
	for _, t := range targets {
		t.launch(*conc)
	}
	// The list pages come first: creations put assets still running at
	// the head of the library, whose renderings are not kept.
	for _, t := range targets {
		gate.before(t.name + ": list and MCP loads")
		t.ownLoads(*conc, *dur, false)
	}
	wrkRounds(gate, targets, *rounds, *conc, *dur, false)
	for _, t := range targets {
		gate.before(t.name + ": creations")
		t.ownLoads(*conc, *dur, true)
	}
	wrkRounds(gate, targets, *rounds, *conc, *dur, true)
	var results []result
	for _, t := range targets {
		t.finish()
		results = append(results, t.r)
	}
	start := startDefault(bin, dir, 7)
	var polls pollResult
	if *pollN > 0 {
		polls = longPolls(bin, dir, fix, *pollN, 5*time.Second)
	}
	if *requireQuiet && !gate.quiet() {
		fmt.Fprintln(os.Stderr, "compare: no report:", gate.report())
		os.Exit(2)
	}
	fmt.Println(gate.report())
	fmt.Println()
	print(results, *conc, *dur)
	summary(results, start, polls, gate.quiet())
	if *baseline != "" {
		against(results, *baseline, gate.quiet())
	}
	if !gate.quiet() {
		fmt.Println()
		fmt.Println(gate.report())
	}
}

// baselineName prefixes the name of the mock built from -baseline.
const baselineName = "baseline mediamock @"

// buildRevision builds cmd/mockserver as it was at a git revision, from
// that revision's tree (git archive), and returns the binary's path.
func buildRevision(dir, rev string) string {
	src := filepath.Join(dir, "baseline-src")
	check(os.MkdirAll(src, 0o755))
	archive := exec.Command("git", "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	check(err)
	untar.Stdin, archive.Stderr, untar.Stderr = pipe, os.Stderr, os.Stderr
	check(untar.Start())
	check(archive.Run())
	check(untar.Wait())
	bin := filepath.Join(dir, "mockserver-baseline")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockserver")
	build.Dir, build.Stdout, build.Stderr = src, os.Stderr, os.Stderr
	check(build.Run())
	return bin
}

// against compares today's mock with the one built from -baseline, both
// loaded in the same rounds: the throughput and the server's CPU time per
// request of each load, today's over the baseline's.
func against(rs []result, rev string, quiet bool) {
	var now, old *result
	for i := range rs {
		switch {
		case rs[i].skipped != "":
		case rs[i].name == "mediamock":
			now = &rs[i]
		case rs[i].name == baselineName+rev:
			old = &rs[i]
		}
	}
	if now == nil || old == nil {
		fmt.Println("\ncompare: no comparison with the baseline: one of the two did not run")
		return
	}
	fmt.Printf("\nToday's mock against the baseline %s, loaded in the same rounds (throughput: higher is better; CPU per request: lower is better):\n", rev)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "load\ttoday\tbaseline\ttoday / baseline\t\n")
	nl, nc := now.headline()
	ol, oc := old.headline()
	rate := func(name string, a, b float64) {
		if a > 0 && b > 0 {
			fmt.Fprintf(tw, "%s, requests/s\t%.0f\t%.0f\t%.2f\t\n", name, a, b, a/b)
		}
	}
	cpu := func(name string, a, b time.Duration) {
		if a > 0 && b > 0 {
			fmt.Fprintf(tw, "%s, server CPU per request\t%s\t%s\t%.2f\t\n", name, us(a), us(b), float64(a)/float64(b))
		}
	}
	rate("list page", nl.rps, ol.rps)
	cpu("list page", bestCPU(now.ownList, now.wrkList), bestCPU(old.ownList, old.wrkList))
	rate("creation", nc.rps, oc.rps)
	cpu("creation", bestCPU(now.ownCreate, now.wrkCreate), bestCPU(old.ownCreate, old.wrkCreate))
	rate("MCP sessionless", now.mcpRPS, old.mcpRPS)
	cpu("MCP sessionless", bestCPU(now.ownMCP, now.wrkMCP), bestCPU(old.ownMCP, old.wrkMCP))
	rate("MCP session", now.mcpSessionRPS, old.mcpSessionRPS)
	cpu("MCP session", bestCPU(now.ownMCPSession, now.wrkMCPSession), bestCPU(old.ownMCPSession, old.wrkMCPSession))
	tw.Flush()
	if !quiet {
		fmt.Println("(not quiet: see the rounds above)")
	}
}

// measure starts a server, times its start to the first 2xx, loads it with
// list pages and (for the mock) creations, and reads its memory.
// paths are what one server is asked: the address polled until it
// answers, the list page, and the creation ("" for a server that has none).
type paths struct {
	ready, list, create string
	mcp                 bool // also the list page as an MCP tool call
}

var mockPaths = paths{ready: "/api/v1/account", list: "/api/v1/assets?limit=20", create: "/api/v1/generations", mcp: true}

// mcpListBody is the list page as an MCP tools/call in the sessionless
// protocol revision: one POST, one JSON answer.
const mcpListBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

var mcpHeaders = []string{"Accept: application/json, text/event-stream",
	"Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: list_assets"}

// mcpSessionBody is the list page as a tools/call inside a session.
const mcpSessionBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`

// mcpSession opens an MCP session (2025-11-25), as most clients do today,
// and returns its id.
func mcpSession(client *http.Client, url string) (string, error) {
	send := func(id, body string) (*http.Response, error) {
		req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := send("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"compare","version":"1"}}}`)
	if err != nil {
		return "", err
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		return "", fmt.Errorf("initialize answered %d without a session", resp.StatusCode)
	}
	_, err = send(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id, err
}

// target is one server under comparison.
type target struct {
	name string
	cmd  *exec.Cmd
	url  string
	p    paths
	r    result
	dir  string // for wrk's scripts
	// client is the program's own, for the MCP session.
	client *http.Client
}

// launch starts the server and times its start to the first 2xx.
func (t *target) launch(conc int) {
	t.r.name = t.name
	if t.r.skipped != "" || t.cmd == nil {
		return
	}
	dir, err := os.MkdirTemp("", "mediamock-wrk-")
	check(err)
	t.dir = dir
	t.cmd.Stdout, t.cmd.Stderr = io.Discard, io.Discard
	began := time.Now()
	if err := t.cmd.Start(); err != nil {
		t.r.skipped = err.Error()
		return
	}
	t.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}}
	for {
		if resp, err := get(t.client, t.url+t.p.ready); err == nil && resp < 300 {
			break
		}
		if time.Since(began) > 2*time.Minute {
			t.r.skipped = "did not start within 2 minutes"
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.r.start = time.Since(began)
	time.Sleep(500 * time.Millisecond)
	t.r.rssIdle, _ = rss(t.cmd.Process.Pid)
}

// byWrk runs one wrk load into into, and says what went wrong.
func (t *target) byWrk(into *wrkRun, conc int, dur time.Duration, method, path, body string, headers ...string) {
	if wrkPath == "" {
		return
	}
	before := t.cpu()
	run, err := wrkLoad(t.dir, t.url, method, path, body, conc, dur, headers...)
	if n := run.served(dur); err == nil && n > 0 {
		run.serverCPU = time.Duration(float64(t.cpu()-before) / n)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "compare: %s %s %s: %v\n", t.name, method, path, err)
		return
	}
	if run.bad > 0 {
		fmt.Fprintf(os.Stderr, "compare: %s %s %s under wrk: %d errors or non-2xx answers\n", t.name, method, path, run.bad)
	}
	*into = run
}

// cpu is the CPU time the server has used.
func (t *target) cpu() time.Duration {
	if t.cmd == nil || t.cmd.Process == nil {
		return 0
	}
	return cpuTime(t.cmd.Process.Pid)
}

// ownLoads loads the server with the program's own generator: the list
// page and the MCP tool calls (by wrk too), or creations.
func (t *target) ownLoads(conc int, dur time.Duration, creations bool) {
	r, p := &t.r, t.p
	if r.skipped != "" {
		return
	}
	if creations {
		if p.create != "" {
			r.createRPS, _, r.createP99 = t.own(&r.ownCreate, conc, dur, "POST", p.create, createBody)
		}
		return
	}
	r.listRPS, r.listP50, r.listP99 = t.own(&r.ownList, conc, dur, "GET", p.list, "")
	if p.mcp {
		r.mcpRPS, _, r.mcpP99 = t.own(&r.ownMCP, conc, dur, "POST", "/mcp", mcpListBody, mcpHeaders...)
		t.byWrk(&r.wrkMCP, conc, dur, "POST", "/mcp", mcpListBody, mcpHeaders...)
		if id, err := mcpSession(t.client, t.url); err == nil {
			session := []string{"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-11-25", "Mcp-Session-Id: " + id}
			r.mcpSessionRPS, _, r.mcpSessionP99 = t.own(&r.ownMCPSession, conc, dur, "POST", "/mcp", mcpSessionBody, session...)
			t.byWrk(&r.wrkMCPSession, conc, dur, "POST", "/mcp", mcpSessionBody, session...)
		} else {
			fmt.Fprintln(os.Stderr, "compare: no MCP session:", err)
		}
	}
}

// own runs one load by the program's own generator and notes into the
// CPU time per request it served of the server and of the generator. It
// returns the rate, p50 and p99.
func (t *target) own(into *wrkRun, conc int, dur time.Duration, method, path, body string, headers ...string) (float64, time.Duration, time.Duration) {
	before, self := t.cpu(), selfCPU()
	rps, p50, p99 := load(t.url, method, path, body, conc, dur, headers...)
	// load's rate is its 2xx answers over the duration.
	if n := math.Round(rps * dur.Seconds()); n > 0 {
		*into = wrkRun{rps: rps, p50: p50, p99: p99, requests: int64(n),
			genCPU: time.Duration(float64(selfCPU()-self) / n), serverCPU: time.Duration(float64(t.cpu()-before) / n)}
	}
	return rps, p50, p99
}

// wrkRounds loads every server with wrk, the list page or creations, one
// server after another, rounds times over, and keeps each figure's median.
// Each round begins on a quiet machine, or is noted by gate.
func wrkRounds(gate *quietGate, ts []*target, rounds, conc int, dur time.Duration, creations bool) {
	if wrkPath == "" || rounds < 1 {
		return
	}
	what := map[bool]string{false: "list", true: "creations"}[creations]
	runs := make([][]wrkRun, len(ts))
	for round := range rounds {
		gate.before(fmt.Sprintf("wrk round %d of %d (%s)", round+1, rounds, what))
		for i, t := range ts {
			if t.r.skipped != "" || (creations && t.p.create == "") {
				continue
			}
			var run wrkRun
			if creations {
				t.byWrk(&run, conc, dur, "POST", t.p.create, createBody)
			} else {
				t.byWrk(&run, conc, dur, "GET", t.p.list, "")
			}
			runs[i] = append(runs[i], run)
		}
	}
	for i, t := range ts {
		if creations {
			t.r.wrkCreate = medianRun(runs[i])
		} else {
			t.r.wrkList = medianRun(runs[i])
		}
	}
}

// medianRun is the median of each figure of several runs.
func medianRun(runs []wrkRun) wrkRun {
	var ok []wrkRun
	for _, r := range runs {
		if r.rps > 0 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return wrkRun{}
	}
	med := func(f func(wrkRun) float64) float64 {
		v := make([]float64, len(ok))
		for i, r := range ok {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	out := wrkRun{
		rps:       med(func(r wrkRun) float64 { return r.rps }),
		p50:       time.Duration(med(func(r wrkRun) float64 { return float64(r.p50) })),
		p99:       time.Duration(med(func(r wrkRun) float64 { return float64(r.p99) })),
		genCPU:    time.Duration(med(func(r wrkRun) float64 { return float64(r.genCPU) })),
		serverCPU: time.Duration(med(func(r wrkRun) float64 { return float64(r.serverCPU) })),
	}
	for _, r := range ok {
		out.bad += r.bad
	}
	return out
}

// finish reads what stays once the loads are over, and stops the server.
func (t *target) finish() {
	if t.dir != "" {
		os.RemoveAll(t.dir)
	}
	if t.r.skipped != "" || t.cmd == nil || t.cmd.Process == nil {
		return
	}
	time.Sleep(1500 * time.Millisecond)
	t.r.rssAfter, t.r.rssPeak = rss(t.cmd.Process.Pid)
	t.cmd.Process.Signal(syscall.SIGTERM)
	t.cmd.Wait()
}

// load runs conc keep-alive connections for dur and returns requests per
// second, p50 and p99.
func load(url, method, path, body string, conc int, dur time.Duration, headers ...string) (float64, time.Duration, time.Duration) {
	addr := strings.TrimPrefix(url, "http://")
	deadline := time.Now().Add(dur)
	var mu sync.Mutex
	var all []time.Duration
	var bad atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		// Each connection has a JSON-RPC id of its own: ids of requests
		// in flight at once must differ (the MCP server refuses a duplicate in flight).
		req := wireRequest(method, addr, path, strings.Replace(body, `"id":1,`, fmt.Sprintf(`"id":%d,`, w+1), 1), headers...)
		go func() {
			defer wg.Done()
			k := &conn{addr: addr}
			defer k.close()
			local := make([]time.Duration, 0, 1<<16)
			for {
				t := time.Now()
				if !t.Before(deadline) {
					break
				}
				status, err := k.do(req)
				if err != nil || status >= 300 {
					bad.Add(1)
					continue
				}
				local = append(local, time.Since(t))
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "compare: %s %s: %d errors or non-2xx answers\n", method, path, n)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return 0, 0, 0
	}
	return float64(len(all)) / dur.Seconds(), all[len(all)/2], all[(len(all)-1)*99/100]
}

// fetchPage reads one list page from the mock, for the bare server's body.
func fetchPage(bin, dir, fix string) []byte {
	addr := freeAddr()
	cmd := exec.Command(bin, "--addr", addr, "--db", filepath.Join(dir, "page.db"), "--reset", "--fixtures", fix, "--clock", "manual")
	check(cmd.Start())
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	for i := 0; ; i++ {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/assets?limit=20", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return b
			}
		}
		if i > 60000 {
			check(fmt.Errorf("the mock did not answer a list page"))
		}
		time.Sleep(time.Millisecond)
	}
}

// bareServer is this program again, serving body on a free port.
func bareServer(body []byte) *exec.Cmd {
	f, err := os.CreateTemp("", "bare-body-")
	check(err)
	f.Write(body)
	f.Close()
	self, err := os.Executable()
	check(err)
	addr := freeAddr()
	cmd := exec.Command(self)
	cmd.Env = []string{"BARE_ADDR=" + addr, "BARE_BODY=" + f.Name()}
	return cmd
}

func init() {
	addr, bodyPath := os.Getenv("BARE_ADDR"), os.Getenv("BARE_BODY")
	if addr == "" {
		return
	}
	body, err := os.ReadFile(bodyPath)
	check(err)
	size := strconv.Itoa(len(body))
	http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", size)
		w.Write(body)
	}))
	os.Exit(0)
}

// prismTarget installs Prism with npm and makes its target, or a skipped
// one.
func prismTarget(dir string) *target {
	t := &target{name: "Prism 5.14.2 (static)"}
	if _, err := exec.LookPath("npx"); err != nil {
		t.r.skipped = "npx is not installed"
		return t
	}
	install := exec.Command("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, "@stoplight/prism-cli@5.14.2")
	if out, err := install.CombinedOutput(); err != nil {
		t.r.skipped = "npm could not install @stoplight/prism-cli: " + strings.TrimSpace(lastLine(out))
		return t
	}
	spec, err := filepath.Abs("openapi.json")
	check(err)
	addr := freeAddr()
	host, port, _ := net.SplitHostPort(addr)
	t.cmd = exec.Command(filepath.Join(dir, "node_modules", ".bin", "prism"), "mock", "--host", host, "--port", port, "--errors=false", spec)
	t.url = "http://" + addr
	// Prism serves the document's paths without its server's base path.
	t.p = paths{ready: "/account", list: "/assets?limit=20", create: "/generations"}
	return t
}

func lastLine(b []byte) string {
	s := bufio.NewScanner(bytes.NewReader(b))
	last := ""
	for s.Scan() {
		if t := strings.TrimSpace(s.Text()); t != "" {
			last = t
		}
	}
	return last
}

// rss reads the resident set size and its peak, in KiB.
func rss(pid int) (int64, int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	var cur, peak int64
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = n
		case "VmHWM:":
			peak = n
		}
	}
	return cur, peak
}

// headline is what the ratios and targets rest on: wrk's figures when it
// ran, else the program's own.
func (r *result) headline() (list, create wrkRun) {
	list, create = r.wrkList, r.wrkCreate
	if list.rps == 0 {
		list = wrkRun{rps: r.listRPS, p50: r.listP50, p99: r.listP99}
	}
	if create.rps == 0 {
		create = wrkRun{rps: r.createRPS, p99: r.createP99}
	}
	return list, create
}

func print(rs []result, conc int, dur time.Duration) {
	var bare, small *result
	for i := range rs {
		switch {
		case strings.HasPrefix(rs[i].name, "bare net/http (1 KB"):
			small = &rs[i]
		case strings.HasPrefix(rs[i].name, "bare") && bare == nil: // the one of the list page's size
			bare = &rs[i]
		}
	}
	rate := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f/s", v)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "server\tGET /assets?limit=20 (own)\t(wrk)\tvs bare\tp50\tp99\tp99 vs bare\tPOST /generations (own)\t(wrk)\tvs bare 1 KB\tp99\tstart\tRSS idle\tRSS after\tRSS peak\t\n")
	for i := range rs {
		r := &rs[i]
		if r.skipped != "" {
			fmt.Fprintf(tw, "%s\tskipped: %s\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", r.name, r.skipped)
			continue
		}
		list, create := r.headline()
		ratio, p99ratio, createRatio, createP99 := "-", "-", "-", "-"
		if bare != nil && bare.skipped == "" {
			bl, _ := bare.headline()
			ratio = fmt.Sprintf("%.0f%%", 100*list.rps/bl.rps)
			p99ratio = fmt.Sprintf("%.1fx", float64(list.p99)/float64(bl.p99))
		}
		if create.rps > 0 {
			createP99 = round(create.p99)
			if small != nil && small.skipped == "" {
				_, sc := small.headline()
				createRatio = fmt.Sprintf("%.0f%%", 100*create.rps/sc.rps)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d MB\t%d MB\t%d MB\t\n", r.name, rate(r.listRPS), rate(r.wrkList.rps), ratio,
			round(list.p50), round(list.p99), p99ratio, rate(r.createRPS), rate(r.wrkCreate.rps), createRatio, createP99,
			round(r.start), r.rssIdle/1024, r.rssAfter/1024, r.rssPeak/1024)
	}
	tw.Flush()
	by := "wrk 4 (1 thread) where it ran, else the program's own generator"
	if wrkPath == "" {
		by = "the program's own generator (wrk is not installed: apt-get install wrk)"
	}
	fmt.Printf("\n%d connections, %s per load, GOMAXPROCS %d, %d CPUs, %s/%s; ratios, p50 and p99 by %s\n", conc, dur, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, by)
	cpuTable(rs, bare, small)
}

// cpuTable prints the CPU time per request each server spent on each
// load, by generator, beside the bare servers', and the generators' own for
// the list page: on two shared cores, a generator's CPU per request is CPU
// the server does not get, which is why the two generators disagree.
func cpuTable(rs []result, bare, small *result) {
	fmt.Printf("\nServer CPU time per request (user+system of the server process over the load, /proc/<pid>/stat, divided by the requests it served):\n")
	cw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(cw, "server\tlist (own)\t(wrk)\tvs bare\tcreation (own)\t(wrk)\tvs bare 1 KB\tMCP sessionless (own)\t(wrk)\tMCP session (own)\t(wrk)\tgenerator, list (own)\t(wrk)\t\n")
	ratio := func(d time.Duration, of *result, pick func(*result) time.Duration) string {
		if of == nil || of.skipped != "" || d == 0 || pick(of) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1fx", float64(d)/float64(pick(of)))
	}
	listOf := func(r *result) time.Duration { return bestCPU(r.ownList, r.wrkList) }
	createOf := func(r *result) time.Duration { return bestCPU(r.ownCreate, r.wrkCreate) }
	for i := range rs {
		r := &rs[i]
		if r.skipped != "" {
			continue
		}
		fmt.Fprintf(cw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.name,
			us(r.ownList.serverCPU), us(r.wrkList.serverCPU), ratio(listOf(r), bare, listOf),
			us(r.ownCreate.serverCPU), us(r.wrkCreate.serverCPU), ratio(createOf(r), small, createOf),
			us(r.ownMCP.serverCPU), us(r.wrkMCP.serverCPU), us(r.ownMCPSession.serverCPU), us(r.wrkMCPSession.serverCPU),
			us(r.ownList.genCPU), us(r.wrkList.genCPU))
	}
	cw.Flush()
	fmt.Printf("(the kernel counts CPU time in ticks of 10 ms: a load of a few thousand requests reads to a few µs per request)\n")
}

// bestCPU is the server CPU per request wrk measured where it ran, else
// the own generator's.
func bestCPU(own, wrk wrkRun) time.Duration {
	if wrk.serverCPU > 0 {
		return wrk.serverCPU
	}
	return own.serverCPU
}

func us(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}

// selfCPU is the CPU time this program has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// summary prints each target of the performance issue next to what this
// run measured; on a machine that was not quiet, whether a target was met
// says so.
func summary(rs []result, start time.Duration, polls pollResult, quiet bool) {
	find := func(prefix string) *result {
		for i := range rs {
			if strings.HasPrefix(rs[i].name, prefix) && rs[i].skipped == "" {
				return &rs[i]
			}
		}
		return nil
	}
	mock, durable, small, prism := find("mediamock"), find("mediamock --durable"), find("bare net/http (1 KB"), find("Prism")
	bare := find("bare net/http (") // the first: the list page's size
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\ntarget\tmeasured\tmet\n")
	line := func(target, measured string, met bool) {
		mark := "yes"
		if !met {
			mark = "NO"
		}
		if !quiet {
			mark += " (not quiet)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", target, measured, mark)
	}
	if mock != nil && bare != nil {
		ml, _ := mock.headline()
		bl, _ := bare.headline()
		line("list page >= 70% of bare (same body size)", fmt.Sprintf("%.0f%% (%.0f/s of %.0f/s)", 100*ml.rps/bl.rps, ml.rps, bl.rps), ml.rps >= 0.7*bl.rps)
		line("list p99 <= 2x bare p99", fmt.Sprintf("%.1fx (%s, %s)", float64(ml.p99)/float64(bl.p99), round(ml.p99), round(bl.p99)), ml.p99 <= 2*bl.p99)
		if mc, bc := bestCPU(mock.ownList, mock.wrkList), bestCPU(bare.ownList, bare.wrkList); mc > 0 && bc > 0 {
			line("list server CPU per request <= 1.6x bare", fmt.Sprintf("%.2fx (%s, %s)", float64(mc)/float64(bc), us(mc), us(bc)), float64(mc) <= 1.6*float64(bc))
		}
	}
	if mock != nil && prism != nil {
		ml, _ := mock.headline()
		pl, _ := prism.headline()
		line("list page >= 10x Prism", fmt.Sprintf("%.1fx", ml.rps/pl.rps), ml.rps >= 10*pl.rps)
		if mock.wrkList.rps > 0 && prism.wrkList.rps > 0 {
			line("  (by the program's own generator)", fmt.Sprintf("%.1fx", mock.listRPS/prism.listRPS), mock.listRPS >= 10*prism.listRPS)
		}
	}
	if mock != nil {
		list := bestCPU(mock.ownList, mock.wrkList)
		for _, c := range []struct {
			name     string
			own, wrk wrkRun
		}{{"sessionless", mock.ownMCP, mock.wrkMCP}, {"in a session", mock.ownMCPSession, mock.wrkMCPSession}} {
			if mc := bestCPU(c.own, c.wrk); mc > 0 && list > 0 {
				line("MCP tools/call server CPU, "+c.name+", <= 1.6x the REST list page's", fmt.Sprintf("%.2fx (%s, %s)", float64(mc)/float64(list), us(mc), us(list)), float64(mc) <= 1.6*float64(list))
			}
		}
	}
	if mock != nil && mock.mcpRPS > 0 {
		line("MCP tools/call list_assets, sessionless, costs <= 4x the REST list page", fmt.Sprintf("%.1fx (%.0f/s, p99 %s; wrk %s)", mock.listRPS/mock.mcpRPS, mock.mcpRPS, round(mock.mcpP99), wrkRate(mock.wrkMCP)), mock.listRPS <= 4*mock.mcpRPS)
	}
	if mock != nil && mock.mcpSessionRPS > 0 {
		line("MCP tools/call list_assets in a session costs <= 2x the REST list page", fmt.Sprintf("%.1fx (%.0f/s, p99 %s; wrk %s)", mock.listRPS/mock.mcpSessionRPS, mock.mcpSessionRPS, round(mock.mcpSessionP99), wrkRate(mock.wrkMCPSession)), mock.listRPS <= 2*mock.mcpSessionRPS)
	}
	if mock != nil && small != nil {
		_, mc := mock.headline()
		_, sc := small.headline()
		line("POST /generations >= 30% of bare (1 KB body)", fmt.Sprintf("%.1f%% (%.0f/s of %.0f/s)", 100*mc.rps/sc.rps, mc.rps, sc.rps), mc.rps >= 0.3*sc.rps)
		line("POST p99 <= 2x bare p99 (1 KB body)", fmt.Sprintf("%.1fx (%s, %s)", float64(mc.p99)/float64(sc.p99), round(mc.p99), round(sc.p99)), mc.p99 <= 2*sc.p99)
	}
	if durable != nil && small != nil {
		_, dc := durable.headline()
		_, sc := small.headline()
		line("POST /generations --durable >= 25% of bare (1 KB body)", fmt.Sprintf("%.1f%% (%.0f/s of %.0f/s)", 100*dc.rps/sc.rps, dc.rps, sc.rps), dc.rps >= 0.25*sc.rps)
	}
	for _, r := range []*result{mock, durable} {
		if r != nil {
			line("RSS peak <= 60 MB: "+r.name, fmt.Sprintf("idle %d MB, after load %d MB, peak %d MB", r.rssIdle/1024, r.rssAfter/1024, r.rssPeak/1024), r.rssPeak <= 60*1024)
		}
	}
	line("start to first 2xx <= 40 ms (default fixtures, median of 7)", round(start), start <= 40*time.Millisecond)
	switch {
	case polls.skipped != "":
		line(fmt.Sprintf("%d long polls", polls.n), "failed: "+polls.skipped, false)
	case polls.n > 0:
		line(fmt.Sprintf("%d long polls <= 250 MB", polls.n), fmt.Sprintf("%d MB (%d MB before)", polls.rss/1024, polls.rssBefore/1024), polls.rss <= 250*1024)
		line(fmt.Sprintf("  and no CPU while they wait (%s)", polls.idleSpan), round(polls.idleCPU), polls.idleCPU <= 50*time.Millisecond)
	}
	tw.Flush()
}

func wrkRate(r wrkRun) string {
	if r.rps == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/s, p99 %s", r.rps, round(r.p99))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func get(client *http.Client, url string) (int, error) {
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}
