package cli

import (
	"flag"
	"fmt"

	"github.com/mediamock/mediamock/internal/proxy"
)

// timingAbout is what the fixtures timing command does.
const timingAbout = `Prints what a recording of the proxy (proxy --record DIR) learned about the timing of
each model's jobs: how many, and the median and 90th percentile of the time queued and of the
time processing, in seconds. With --write it sets those models' entries of the fixture's
timing block, so that the mock draws each job's times from the durations recorded
(--as samples) or from a lognormal of the same median and 90th percentile (--as lognormal).`

// Timing is what the fixtures timing command's flags set.
type Timing struct {
	Recording, Write, As string
}

// TimingFlags makes the fixtures timing command's flag set and the
// settings it parses into. Its flags read no variable.
func TimingFlags() (*Timing, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver fixtures timing", flag.ContinueOnError)
	s := &Timing{}
	fs.StringVar(&s.Recording, "recording", "", "a record directory of proxy --record, or its "+proxy.TimingFile+" (required)")
	fs.StringVar(&s.Write, "write", "", "set the learned models' timing in this fixture file (made, extending the default, when missing)")
	fs.StringVar(&s.As, "as", proxy.AsSamples, "the form written: samples (the durations recorded, replayed) or lognormal")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver fixtures timing --recording DIR [--write F] [--as samples|lognormal]

`+timingAbout+`

Flags:
`)
		printFlags(w, fs, NoEnv, 12)
	}
	return s, fs
}
