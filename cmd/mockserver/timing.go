package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/cli"
	"github.com/mediamock/mediamock/internal/proxy"
)

// The fixtures timing command: what a recording of the proxy learned about
// how long each model's jobs take, printed, and written as a fixture's
// timing block.
//
//	mockserver fixtures timing --recording recorded
//	mockserver fixtures timing --recording recorded --write recorded/fixture.json

// runFixtures runs a fixtures command: timing is the only one.
func runFixtures(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "timing" {
		return runTiming(args[1:], stdout, stderr)
	}
	what := "a command"
	if len(args) > 0 {
		what = fmt.Sprintf("a command, not %q", args[0])
	}
	fmt.Fprintf(stderr, "mockserver fixtures: want %s: timing (mockserver fixtures timing --help)\n", what)
	return 2
}

func runTiming(args []string, stdout, stderr io.Writer) int {
	s, fset := cli.TimingFlags()
	_, err := parseCommandLine(fset, args, cli.NoEnv, cli.NoEnv, stdout, stderr)
	switch {
	case err != nil:
	case s.Recording == "":
		err = errors.New("--recording is required: the directory of proxy --record, or its " + proxy.TimingFile)
	case s.As != proxy.AsSamples && s.As != proxy.AsLogNormal:
		err = fmt.Errorf("--as must be %s or %s, got %q", proxy.AsSamples, proxy.AsLogNormal, s.As)
	}
	if code, stop := commandLine("mockserver fixtures timing", err, stderr); stop {
		return code
	}
	t, err := proxy.ReadTimings(s.Recording)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver fixtures timing:", err)
		return 1
	}
	learned := t.Learn()
	printLearned(stdout, learned)
	if s.Write == "" {
		return 0
	}
	n, skipped, err := writeLearnedTiming(s.Write, learned, s.As)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver fixtures timing:", err)
		return 1
	}
	for _, why := range skipped {
		fmt.Fprintln(stderr, "mockserver fixtures timing: left out:", why)
	}
	fmt.Fprintf(stdout, "wrote the timing of %d models (%s) to %s\n", n, s.As, s.Write)
	return 0
}

// printLearned writes the table of what was learned, durations in seconds.
func printLearned(w io.Writer, learned []proxy.Learned) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tMODALITY\tJOBS\tQUEUED\tMEDIAN\tP90\tPROCESSING\tMEDIAN\tP90")
	for _, l := range learned {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2fs\t%.2fs\t%d\t%.2fs\t%.2fs\n", l.Model, l.Modality, l.Jobs,
			l.Queued.Count, l.Queued.Median, l.Queued.P90, l.Processing.Count, l.Processing.Median, l.Processing.P90)
	}
	tw.Flush()
}

// learnedEntry is one entry of the timing block as written: the two
// distributions, nothing else.
type learnedEntry struct {
	Queued     *fixtures.Distribution `json:"queued"`
	Processing *fixtures.Distribution `json:"processing"`
}

// writeLearnedTiming sets the learned models' entries of the timing block
// of the fixture at path (other entries and keys kept, in their order),
// checks that the mock loads the result, and replaces the file whole. A
// missing file becomes {"extends": "default", "timing": ...}. It returns
// how many entries it wrote and why it left the others out.
func writeLearnedTiming(path string, learned []proxy.Learned, form string) (int, []string, error) {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = []byte(`{"extends": "default"}`)
	case err != nil:
		return 0, nil, err
	}
	keys, values, err := topLevel(old)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	// The models and effects the fixture holds, without a timing block
	// (whose entries may name what the fixture lost since).
	without := slices.Clone(keys)
	i := slices.Index(without, "timing")
	bare := map[string]json.RawMessage{}
	for k, v := range values {
		if k != "timing" {
			bare[k] = v
		}
	}
	if i >= 0 {
		without = slices.Delete(without, i, i+1)
	}
	w, err := fixtures.Parse(path, encodeTopLevel(without, bare), 0)
	if err != nil {
		return 0, nil, err
	}
	known := map[string]bool{}
	for _, m := range w.Models {
		known[m.ID] = true
	}
	for _, e := range w.EncoreEffects {
		known[e.Slug] = true
	}
	block := map[string]json.RawMessage{}
	if raw, ok := values["timing"]; ok {
		if err := json.Unmarshal(raw, &block); err != nil {
			return 0, nil, fmt.Errorf("%s: $.timing: %w", path, err)
		}
	}
	var skipped []string
	n := 0
	for _, l := range learned {
		t, ok := l.Timing(form)
		switch {
		case !known[l.Model]:
			skipped = append(skipped, fmt.Sprintf("%s: the fixture has no model or effect of that name", l.Model))
			continue
		case !ok:
			skipped = append(skipped, fmt.Sprintf("%s: no job of it was seen both queued and processing", l.Model))
			continue
		}
		b, _ := json.Marshal(learnedEntry{Queued: t.Queued, Processing: t.Processing})
		block[l.Model] = b
		n++
	}
	if _, ok := values["timing"]; !ok {
		keys = append(keys, "timing")
	}
	values["timing"] = encodeBlock(block)
	data := encodeTopLevel(keys, values)
	if _, err := fixtures.Parse(path, data, 0); err != nil {
		return 0, nil, err
	}
	return n, skipped, writeFileAtomic(path, data)
}

// topLevel reads a JSON object's keys in order and their values.
func topLevel(data []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("a fixture is a JSON object")
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := values[k]; !dup {
			keys = append(keys, k)
		}
		values[k] = v
	}
	return keys, values, nil
}

// encodeTopLevel writes the object back, two spaces a level, the keys in
// their order.
func encodeTopLevel(keys []string, values map[string]json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		name, _ := json.Marshal(k)
		fmt.Fprintf(&b, "\n  %s: ", name)
		if k == "timing" {
			b.Write(values[k]) // laid out already
			continue
		}
		var v bytes.Buffer
		if json.Indent(&v, values[k], "  ", "  ") != nil {
			v.Reset()
			v.Write(values[k])
		}
		b.Write(v.Bytes())
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// encodeBlock lays the timing block out one model a line, by name.
func encodeBlock(block map[string]json.RawMessage) json.RawMessage {
	if len(block) == 0 {
		return json.RawMessage("{}")
	}
	var lines []string
	names := make([]string, 0, len(block))
	for k := range block {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		name, _ := json.Marshal(k)
		var v bytes.Buffer
		if json.Compact(&v, block[k]) != nil {
			v.Reset()
			v.Write(block[k])
		}
		lines = append(lines, "    "+string(name)+": "+v.String())
	}
	return json.RawMessage("{\n" + strings.Join(lines, ",\n") + "\n  }")
}

// writeFileAtomic replaces a file whole through a temporary file beside it.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".fixture-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
