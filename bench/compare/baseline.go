package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"
)

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
