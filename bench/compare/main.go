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
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	bin, bareBin := filepath.Join(dir, "mockserver"), filepath.Join(dir, "bare")
	for _, b := range [][2]string{{bin, "./cmd/mockserver"}, {bareBin, "./bench/compare/bare"}} {
		build := exec.Command("go", "build", "-o", b[0], b[1])
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		check(build.Run())
	}
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
	bare, addr := bareServer(bareBin, dir, page)
	targets = append(targets, &target{name: fmt.Sprintf("bare net/http (%d B body)", len(page)), cmd: bare, url: "http://" + addr, p: paths{ready: "/", list: "/"}})
	small, addr := bareServer(bareBin, dir, bytes.Repeat([]byte("x"), 1024))
	targets = append(targets, &target{name: "bare net/http (1 KB body)", cmd: small, url: "http://" + addr, p: paths{ready: "/", list: "/", create: "/"}})
	if *prism {
		targets = append(targets, prismTarget(dir))
	}
	// Every server runs at once; each is loaded in turn by the program's
	// own generator, then wrk loads them in rounds, one after the other,
	// so that a machine whose speed drifts over minutes weighs on every
	// server alike (the medians of the rounds are kept).
	for _, t := range targets {
		for _, o := range targets {
			if o != t && o.cmd != nil {
				t.others = append(t.others, o)
			}
		}
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
