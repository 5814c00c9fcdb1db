package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// paths are what one server is asked: the address polled until it
// answers, the list page, and the creation ("" for a server that has none).
type paths struct {
	ready, list, create string
	mcp                 bool // also the list page as an MCP tool call
}

var mockPaths = paths{ready: "/api/v1/account", list: "/api/v1/assets?limit=20", create: "/api/v1/generations", mcp: true}

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
	// others are the other servers, which run at the same time: each load
	// begins once they are idle (idleOthers).
	others []*target
}

// idleOthers waits, up to idleWait, until none of the other servers uses
// CPU over a short span: one still busy after its own load (its collector,
// its scavenger, its state file) would take from the server under load a
// share of the two cores its per-request figures do not show.
func (t *target) idleOthers() {
	deadline := time.Now().Add(idleWait)
	for {
		before := make([]time.Duration, len(t.others))
		for i, o := range t.others {
			before[i] = o.cpu()
		}
		time.Sleep(idleSpan)
		busy := ""
		for i, o := range t.others {
			if o.cpu()-before[i] > idleCPU {
				busy = o.name
			}
		}
		if busy == "" {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "compare: %s still busy before the load of %s\n", busy, t.name)
			return
		}
	}
}

// idleSpan, idleCPU, idleWait: a server is idle when it uses at most
// idleCPU (one tick of the kernel's accounting) over idleSpan; a load
// waits for the others at most idleWait.
const (
	idleSpan = 300 * time.Millisecond
	idleCPU  = 10 * time.Millisecond
	idleWait = 10 * time.Second
)

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
	t.idleOthers()
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
	t.idleOthers()
	before, self := t.cpu(), selfCPU()
	rps, p50, p99 := load(t.url, method, path, body, conc, dur, headers...)
	// load's rate is its 2xx answers over the duration.
	if n := math.Round(rps * dur.Seconds()); n > 0 {
		*into = wrkRun{rps: rps, p50: p50, p99: p99, requests: int64(n),
			genCPU: time.Duration(float64(selfCPU()-self) / n), serverCPU: time.Duration(float64(t.cpu()-before) / n)}
	}
	return rps, p50, p99
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
