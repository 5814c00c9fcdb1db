package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// quietGate holds the rounds to a quiet machine: before each round it
// reads the 1-minute load average and, while it is above max, waits (up to
// settle) for it to fall: the previous round's own load decays in about a
// minute, another program's does not. A round that begins above max is
// noted, and the run is reported as not quiet (or refused).
type quietGate struct {
	max    float64
	settle time.Duration
	// read reads the 1-minute load average; sleep waits; now reads the
	// clock (injected by the tests).
	read  func() (float64, error)
	sleep func(time.Duration)
	now   func() time.Time
	// noisy are the rounds that began above max; unknown says the load
	// average could not be read.
	noisy   []string
	unknown string
	rounds  int
	highest float64
}

func newQuietGate(max float64, settle time.Duration) *quietGate {
	return &quietGate{max: max, settle: settle, read: loadAverage, sleep: time.Sleep, now: time.Now}
}

// settleStep is how often the gate reads the load average while it waits:
// the kernel computes it every 5 seconds.
const settleStep = 5 * time.Second

// before waits for a quiet machine before the round what, and notes the
// round as noisy when it does not get one.
func (g *quietGate) before(what string) {
	g.rounds++
	load, err := g.read()
	if err != nil {
		g.unknown = err.Error()
		return
	}
	if load > g.max {
		fmt.Fprintf(os.Stderr, "compare: load average %.2f > %.2f before %s: waiting up to %s for it to fall\n", load, g.max, what, g.settle)
	}
	for deadline := g.now().Add(g.settle); load > g.max && g.now().Before(deadline); {
		g.sleep(settleStep)
		if load, err = g.read(); err != nil {
			g.unknown = err.Error()
			return
		}
	}
	g.highest = max(g.highest, load)
	if load > g.max {
		g.noisy = append(g.noisy, fmt.Sprintf("%s began at load average %.2f", what, load))
	}
}

// quiet reports whether every round began on a quiet machine.
func (g *quietGate) quiet() bool { return len(g.noisy) == 0 && g.unknown == "" }

// report says how quiet the machine was, in a line or a block.
func (g *quietGate) report() string {
	switch {
	case g.unknown != "":
		return fmt.Sprintf("QUIETNESS UNKNOWN: the load average could not be read (%s): the figures are not to be quoted.", g.unknown)
	case len(g.noisy) > 0:
		return fmt.Sprintf("NOT QUIET: %d of %d rounds began with the 1-minute load average above %.2f (another program was busy); the figures are not to be quoted:\n  %s",
			len(g.noisy), g.rounds, g.max, strings.Join(g.noisy, "\n  "))
	}
	return fmt.Sprintf("quiet: each of %d rounds began with the 1-minute load average at most %.2f (highest %.2f).", g.rounds, g.max, g.highest)
}

// loadAverage reads the 1-minute load average of /proc/loadavg.
func loadAverage() (float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	return parseLoadAverage(string(data))
}

// parseLoadAverage reads the first field of /proc/loadavg
// ("0.42 0.30 0.25 1/234 5678").
func parseLoadAverage(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg is empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/loadavg: %w", err)
	}
	return v, nil
}
