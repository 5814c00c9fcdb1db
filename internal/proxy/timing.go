package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/check"
)

// TimingFile is the name of the timing samples in the record directory.
const TimingFile = "timing.json"

// TimingFormat names the format of TimingFile, and its version.
const TimingFormat = "mediamock-timing/1"

// Timings is what TimingFile holds: one entry per job created through the
// proxy, in the order of creation.
type Timings struct {
	Format string      `json:"format"`
	Jobs   []JobTiming `json:"jobs"`
}

// JobTiming is how long one job queued and processed, in seconds.
//
// The spec's objects carry created_at and no time of start or end, so the
// proxy measures on its own clock: the job was created when the create
// answer reached the proxy, started between the last answer that showed
// it queued and the first that showed it processing, and ended between the
// last answer that showed it running and the first that showed it
// completed or failed. Each instant is the middle of its interval, and
// *_within_seconds is half the interval's width: how far the true value
// may be. A delay of the network shifts every instant alike, and cancels
// out. An answer that waited (wait_seconds) and shows the job done places
// the end at its arrival. When the objects carry started_at and
// completed_at (or finished_at, failed_at) along with created_at, those
// are used instead, and measured_by says "timestamps".
type JobTiming struct {
	// Model is the model's id, or the Encore effect's slug.
	Model string `json:"model"`
	// Modality is image, video, audio/voice, audio/music, 3d or encore.
	Modality string `json:"modality"`
	// Outcome is completed or failed; "" when the job was still running
	// when the recording was written.
	Outcome    string `json:"outcome,omitempty"`
	MeasuredBy string `json:"measured_by"` // polls or timestamps
	// QueuedSeconds is from creation to the start of processing;
	// ProcessingSeconds from there to the outcome; TotalSeconds from
	// creation to the outcome. Each is null when not observed (a job seen
	// queued, then done, has a total and no split).
	QueuedSeconds     *float64 `json:"queued_seconds"`
	ProcessingSeconds *float64 `json:"processing_seconds"`
	TotalSeconds      *float64 `json:"total_seconds"`
	QueuedWithin      float64  `json:"queued_within_seconds"`
	ProcessingWithin  float64  `json:"processing_within_seconds"`
}

// jobTrack is what the answers told about one job so far.
type jobTrack struct {
	model, modality string
	created         time.Time // the create answer's arrival (its request's, when it waited)
	lastQueued      time.Time // zero: never seen queued after creation, nor at it
	firstRunning    time.Time // zero: never seen processing
	lastNotDone     time.Time
	end             time.Time // zero: not done yet
	outcome         string
	// The server's own instants, when its objects carry them.
	stampCreated, stampStarted, stampEnded time.Time
}

// timingTracker follows the jobs created through the proxy; the recorder
// holds it under its lock.
type timingTracker struct {
	jobs []*jobTrack
	byID map[string]*jobTrack // "a:<asset id>" or "e:<creation id>"
}

// observation is one answer, as the tracker needs it.
type observation struct {
	opID    string
	request map[string]any // the request's JSON body, nil when none
	body    any
	sent    time.Time // the request reached the proxy
	at      time.Time // the answer reached the proxy
	waited  bool      // the request asked to wait (wait_seconds above 0)
}

func (tt *timingTracker) observe(o observation) {
	if tt.byID == nil {
		tt.byID = map[string]*jobTrack{}
	}
	created := o.at
	if o.waited {
		created = o.sent // the job was created when the request came; the answer waited
	}
	switch o.opID {
	case "createGeneration":
		m, _ := o.body.(map[string]any)
		assets, _ := m["assets"].([]any)
		modality, _ := o.request["modality"].(string)
		if track, _ := o.request["track"].(string); modality == "audio" {
			if track == "" {
				track = "voice"
			}
			modality += "/" + track
		}
		var j *jobTrack
		for _, a := range assets {
			a, _ := a.(map[string]any)
			id, ok := check.IntOf(a["id"])
			if !ok {
				continue
			}
			if j == nil {
				model, _ := a["model"].(string)
				if model == "" {
					model, _ = o.request["model_id"].(string)
				}
				if modality == "" {
					kind, _ := a["kind"].(string)
					modality = modalityOfKind(kind)
				}
				j = &jobTrack{model: model, modality: modality, created: created}
				tt.jobs = append(tt.jobs, j)
			}
			tt.byID[fmt.Sprintf("a:%d", id)] = j
		}
	case "createEncoreCreation":
		m, _ := o.body.(map[string]any)
		id, ok := check.IntOf(m["id"])
		effect, _ := m["effect"].(string)
		if !ok || effect == "" {
			break
		}
		j := &jobTrack{model: effect, modality: "encore", created: created}
		tt.jobs = append(tt.jobs, j)
		tt.byID[fmt.Sprintf("e:%d", id)] = j
		if aid, ok := check.IntOf(m["asset_id"]); ok {
			tt.byID[fmt.Sprintf("a:%d", aid)] = j
		}
	}
	walkJobs(o.body, func(key string, obj map[string]any) {
		if j := tt.byID[key]; j != nil {
			status, _ := obj["status"].(string)
			j.see(status, o.at, o.waited)
			j.stamps(obj)
		}
	})
}

// see notes the job's status in an answer that reached the proxy at t.
func (j *jobTrack) see(status string, t time.Time, waited bool) {
	if !j.end.IsZero() {
		return
	}
	switch status {
	case "queued":
		if j.firstRunning.IsZero() {
			j.lastQueued = t
		}
		j.lastNotDone = t
	case "processing":
		if j.firstRunning.IsZero() {
			j.firstRunning = t
		}
		j.lastNotDone = t
	case "completed", "failed":
		j.end, j.outcome = t, status
		if waited {
			j.lastNotDone = t // it answered as the job ended
		}
	case "":
	default: // a running state the spec does not list: running, not started
		j.lastNotDone = t
	}
}

// stamps keeps the server's instants an object carries.
func (j *jobTrack) stamps(obj map[string]any) {
	parse := func(keys ...string) time.Time {
		for _, k := range keys {
			if s, ok := obj[k].(string); ok {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					return t
				}
			}
		}
		return time.Time{}
	}
	if t := parse("created_at"); !t.IsZero() && j.stampCreated.IsZero() {
		j.stampCreated = t
	}
	if t := parse("started_at"); !t.IsZero() {
		j.stampStarted = t
	}
	if t := parse("completed_at", "finished_at", "failed_at"); !t.IsZero() {
		j.stampEnded = t
	}
}

// timing is what the job's observations measure.
func (j *jobTrack) timing() JobTiming {
	out := JobTiming{Model: j.model, Modality: j.modality, Outcome: j.outcome, MeasuredBy: "polls"}
	secs := func(d time.Duration) *float64 {
		x := math.Round(max(d.Seconds(), 0)*1000) / 1000
		return &x
	}
	round := func(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }
	if !j.stampCreated.IsZero() && !j.stampStarted.IsZero() {
		out.MeasuredBy = "timestamps"
		out.QueuedSeconds = secs(j.stampStarted.Sub(j.stampCreated))
		if !j.stampEnded.IsZero() && j.outcome != "" {
			out.ProcessingSeconds = secs(j.stampEnded.Sub(j.stampStarted))
			out.TotalSeconds = secs(j.stampEnded.Sub(j.stampCreated))
		}
		return out
	}
	mid := func(a, b time.Time) time.Time { return a.Add(b.Sub(a) / 2) }
	var start, startLo time.Time
	switch {
	case !j.firstRunning.IsZero() && j.lastQueued.IsZero():
		start, startLo = j.created, j.created // processing from its creation on
	case !j.firstRunning.IsZero():
		start, startLo = mid(j.lastQueued, j.firstRunning), j.lastQueued
		out.QueuedWithin = round(j.firstRunning.Sub(j.lastQueued) / 2)
	}
	if !start.IsZero() {
		out.QueuedSeconds = secs(start.Sub(j.created))
	}
	if j.end.IsZero() {
		return out
	}
	lastNotDone := j.lastNotDone
	if lastNotDone.IsZero() {
		lastNotDone = j.created
	}
	end := mid(lastNotDone, j.end)
	out.TotalSeconds = secs(end.Sub(j.created))
	if !start.IsZero() {
		out.ProcessingSeconds = secs(end.Sub(start))
		out.ProcessingWithin = round(j.end.Sub(lastNotDone)/2 + start.Sub(startLo))
	}
	return out
}

// modalityOfKind is the modality of an asset kind, for a job whose
// request did not say.
func modalityOfKind(kind string) string {
	switch kind {
	case "voice", "music":
		return "audio/" + kind
	case "model3d":
		return "3d"
	}
	return kind
}

// walkJobs calls fn for every asset ("a:<id>") and Encore creation
// ("e:<id>") in a body.
func walkJobs(v any, fn func(key string, obj map[string]any)) {
	switch t := v.(type) {
	case map[string]any:
		if id, ok := check.IntOf(t["id"]); ok {
			switch t["object"] {
			case "asset":
				fn(fmt.Sprintf("a:%d", id), t)
			case "encore_creation":
				fn(fmt.Sprintf("e:%d", id), t)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			walkJobs(t[k], fn)
		}
	case []any:
		for _, item := range t {
			walkJobs(item, fn)
		}
	}
}

// timings is the recording of the jobs seen so far.
func (tt *timingTracker) timings() Timings {
	out := Timings{Format: TimingFormat, Jobs: []JobTiming{}}
	for _, j := range tt.jobs {
		out.Jobs = append(out.Jobs, j.timing())
	}
	return out
}

// writeTimings writes the timings to dir/timing.json, whole or not at
// all: one job a line.
func writeTimings(dir string, t Timings) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"format\": %q, \"jobs\": [", t.Format)
	for i, j := range t.Jobs {
		line, err := json.Marshal(j)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return writeAtomic(dir, TimingFile, b.Bytes())
}

// ReadTimings reads a recording's timing samples: the file, or
// timing.json in the directory.
func ReadTimings(path string) (Timings, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, TimingFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Timings{}, err
	}
	var t Timings
	if err := json.Unmarshal(data, &t); err != nil {
		return Timings{}, fmt.Errorf("%s: %w", path, err)
	}
	if t.Format != TimingFormat {
		return Timings{}, fmt.Errorf("%s: format %q, want %q", path, t.Format, TimingFormat)
	}
	return t, nil
}

// Stats summarise durations in seconds.
type Stats struct {
	Count  int     `json:"count"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
}

func statsOf(xs []float64) Stats {
	return Stats{Count: len(xs), Median: fixtures.Quantile(xs, 0.5), P90: fixtures.Quantile(xs, 0.9)}
}

// Learned is what a recording tells about one model or effect.
type Learned struct {
	Model      string    `json:"model"`
	Modality   string    `json:"modality"`
	Jobs       int       `json:"jobs"`
	Queued     Stats     `json:"queued"`
	Processing Stats     `json:"processing"`
	queued     []float64 // in the order recorded
	processing []float64
}

// Learn groups the jobs by model, in the order each model was first seen.
func (t Timings) Learn() []Learned {
	var out []Learned
	at := map[string]int{}
	for _, j := range t.Jobs {
		i, ok := at[j.Model]
		if !ok {
			i = len(out)
			at[j.Model] = i
			out = append(out, Learned{Model: j.Model, Modality: j.Modality})
		}
		l := &out[i]
		l.Jobs++
		if j.QueuedSeconds != nil {
			l.queued = append(l.queued, *j.QueuedSeconds)
		}
		if j.ProcessingSeconds != nil && j.Outcome != "" {
			l.processing = append(l.processing, *j.ProcessingSeconds)
		}
	}
	for i := range out {
		out[i].Queued, out[i].Processing = statsOf(out[i].queued), statsOf(out[i].processing)
	}
	return out
}

// The forms a learned timing is written in.
const (
	AsSamples   = "samples"
	AsLogNormal = "lognormal"
)

// Timing is the fixture timing of what was learned, in the form asked:
// the recorded durations replayed (AsSamples), or a lognormal of the same
// median whose sigma puts the 90th percentile where the recording's is
// (AsLogNormal). ok is false when the recording lacks a queue or a
// processing time of the model.
func (l Learned) Timing(form string) (fixtures.Timing, bool) {
	if len(l.queued) == 0 || len(l.processing) == 0 {
		return fixtures.Timing{}, false
	}
	dist := func(xs []float64, s Stats) *fixtures.Distribution {
		if form != AsLogNormal {
			return &fixtures.Distribution{Samples: slices.Clone(xs)}
		}
		if s.Median <= 0 {
			zero := 0.0
			return &fixtures.Distribution{Fixed: &zero}
		}
		sigma := 0.0
		if s.P90 > s.Median {
			sigma = math.Log(s.P90/s.Median) / 1.2815515655446004 // the 90th percentile of a standard normal
		}
		sigma = math.Round(min(sigma, fixtures.MaxSigma)*1000) / 1000
		return &fixtures.Distribution{LogNormal: &fixtures.LogNormal{Median: math.Round(s.Median*1000) / 1000, Sigma: sigma}}
	}
	return fixtures.Timing{Queued: dist(l.queued, l.Queued), Processing: dist(l.processing, l.Processing)}, true
}
