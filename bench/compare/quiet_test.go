package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseLoadAverage(t *testing.T) {
	v, err := parseLoadAverage("1.52 0.98 0.61 3/412 90210\n")
	if err != nil || v != 1.52 {
		t.Fatal(v, err)
	}
	for _, bad := range []string{"", "x 1 2"} {
		if _, err := parseLoadAverage(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// fakeMachine is a load average that follows a script, and a clock that
// moves only when the gate sleeps.
type fakeMachine struct {
	loads []float64
	at    time.Time
}

func (m *fakeMachine) gate(max float64, settle time.Duration) *quietGate {
	g := newQuietGate(max, settle)
	g.read = func() (float64, error) {
		v := m.loads[0]
		if len(m.loads) > 1 {
			m.loads = m.loads[1:]
		}
		return v, nil
	}
	g.sleep = func(d time.Duration) { m.at = m.at.Add(d) }
	g.now = func() time.Time { return m.at }
	return g
}

func TestQuietGate(t *testing.T) {
	t.Run("quiet", func(t *testing.T) {
		m := &fakeMachine{loads: []float64{0.3}}
		g := m.gate(1, time.Minute)
		g.before("round 1")
		g.before("round 2")
		if !g.quiet() || !strings.HasPrefix(g.report(), "quiet: each of 2 rounds") || !m.at.IsZero() {
			t.Fatal(g.report(), m.at)
		}
	})
	t.Run("its own load decays: it waits", func(t *testing.T) {
		m := &fakeMachine{loads: []float64{1.8, 1.5, 1.2, 0.9}}
		g := m.gate(1, time.Minute)
		g.before("round 2")
		if !g.quiet() || m.at.Sub(time.Time{}) != 3*settleStep {
			t.Fatal(g.report(), m.at)
		}
	})
	t.Run("another program's does not: not quiet", func(t *testing.T) {
		m := &fakeMachine{loads: []float64{2.5}}
		g := m.gate(1, 20*time.Second)
		g.before("wrk round 1 (list)")
		if g.quiet() || !strings.Contains(g.report(), "NOT QUIET: 1 of 1 rounds") || !strings.Contains(g.report(), "wrk round 1 (list) began at load average 2.50") {
			t.Fatal(g.report())
		}
		if m.at.Sub(time.Time{}) > 20*time.Second+settleStep {
			t.Fatal("waited past settle:", m.at)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		g := newQuietGate(1, time.Minute)
		g.read = func() (float64, error) { return 0, errors.New("no /proc") }
		g.before("round 1")
		if g.quiet() || !strings.HasPrefix(g.report(), "QUIETNESS UNKNOWN") {
			t.Fatal(g.report())
		}
	})
}
