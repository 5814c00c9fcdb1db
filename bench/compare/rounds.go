package main

import (
	"fmt"
	"slices"
	"time"
)

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
	cpus := make([]time.Duration, len(ok))
	for i, r := range ok {
		cpus[i] = r.serverCPU
	}
	out := wrkRun{
		cpuLo:     slices.Min(cpus),
		cpuHi:     slices.Max(cpus),
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
