package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

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
			us(r.ownList.serverCPU), spread(r.wrkList), ratio(listOf(r), bare, listOf),
			us(r.ownCreate.serverCPU), spread(r.wrkCreate), ratio(createOf(r), small, createOf),
			us(r.ownMCP.serverCPU), us(r.wrkMCP.serverCPU), us(r.ownMCPSession.serverCPU), us(r.wrkMCPSession.serverCPU),
			us(r.ownList.genCPU), us(r.wrkList.genCPU))
	}
	cw.Flush()
	fmt.Printf("(wrk's figure is the median of its rounds, the least and the most in brackets; the kernel counts CPU time in ticks of 10 ms: a load of a few thousand requests reads to a few µs per request)\n")
}

// spread is the median server CPU per request of wrk's rounds, with the
// least and the most when they differ.
func spread(r wrkRun) string {
	if r.serverCPU == 0 || r.cpuLo == r.cpuHi {
		return us(r.serverCPU)
	}
	return fmt.Sprintf("%s (%.1f–%.1f)", us(r.serverCPU), float64(r.cpuLo)/float64(time.Microsecond), float64(r.cpuHi)/float64(time.Microsecond))
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
		line("POST /generations >= 33% of bare (1 KB body)", fmt.Sprintf("%.1f%% (%.0f/s of %.0f/s)", 100*mc.rps/sc.rps, mc.rps, sc.rps), mc.rps >= 0.33*sc.rps)
		line("POST p99 <= 2x bare p99 (1 KB body)", fmt.Sprintf("%.1fx (%s, %s)", float64(mc.p99)/float64(sc.p99), round(mc.p99), round(sc.p99)), mc.p99 <= 2*sc.p99)
	}
	if durable != nil && small != nil {
		_, dc := durable.headline()
		_, sc := small.headline()
		line("POST /generations --durable >= 25% of bare (1 KB body)", fmt.Sprintf("%.1f%% (%.0f/s of %.0f/s)", 100*dc.rps/sc.rps, dc.rps, sc.rps), dc.rps >= 0.25*sc.rps)
	}
	for _, r := range []*result{mock, durable} {
		if r != nil {
			line("RSS idle <= 20 MB, after the loads <= 50 MB: "+r.name, fmt.Sprintf("idle %d MB, after the loads %d MB (peak %d MB)", r.rssIdle/1024, r.rssAfter/1024, r.rssPeak/1024), r.rssIdle <= 20*1024 && r.rssAfter <= 50*1024)
		}
	}
	line("start to first 2xx <= 15 ms (default fixtures, median of 7)", round(start), start <= 15*time.Millisecond)
	switch {
	case polls.skipped != "":
		line(fmt.Sprintf("%d long polls", polls.n), "failed: "+polls.skipped, false)
	case polls.n > 0:
		line(fmt.Sprintf("%d long polls <= 150 MB", polls.n), fmt.Sprintf("%d MB (%d MB before)", polls.rss/1024, polls.rssBefore/1024), polls.rss <= 150*1024)
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
