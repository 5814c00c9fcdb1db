package sim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/fixtures"
)

// Magic markers: text a black-box client puts in a prompt (or a title, or a
// caption) to reach a failure path without the control API. The text is
// stored and returned exactly as sent.
//
//	[mock:fail]                  fail while processing (provider_error), credits refunded
//	[mock:fail-queued]           fail before processing starts
//	[mock:fail-code=CODE]        fail while processing with error code CODE
//	[mock:delay=DURATION]        no provider queue, processing takes DURATION (45, 45s, 2m)
//	[mock:stuck]                 never finishes (until the control API fails it)
//	[mock:fail-platform=NAME]    publications: the delivery to platform NAME fails ("all" for every one)
var magicPattern = regexp.MustCompile(`\[mock:([a-z-]+)(?:=([A-Za-z0-9_.-]+))?\]`)

// MaxMagicDelay bounds [mock:delay=...]: longer delays are cut to it.
const MaxMagicDelay = 30 * 24 * time.Hour

// Magic is what the markers in a text ask for.
type Magic struct {
	Fail          bool
	FailStage     string // queued or processing
	FailCode      string
	Delay         time.Duration // -1 when not set
	Stuck         bool
	FailPlatforms []string
}

// ParseMagic reads the magic markers of a text.
func ParseMagic(text string) Magic {
	m := Magic{Delay: -1}
	if !strings.Contains(text, "[mock:") {
		return m
	}
	for _, sub := range magicPattern.FindAllStringSubmatch(text, -1) {
		switch arg := sub[2]; sub[1] {
		case "fail":
			m.Fail, m.FailStage = true, StatusProcessing
		case "fail-queued":
			m.Fail, m.FailStage = true, StatusQueued
		case "fail-code":
			m.Fail, m.FailCode = true, arg
			if m.FailStage == "" {
				m.FailStage = StatusProcessing
			}
		case "delay":
			if d, ok := parseSeconds(arg); ok {
				m.Delay = min(d, MaxMagicDelay)
			}
		case "stuck":
			m.Stuck = true
		case "fail-platform":
			if arg != "" {
				m.FailPlatforms = append(m.FailPlatforms, strings.ToLower(arg))
			}
		}
	}
	return m
}

func parseSeconds(s string) (time.Duration, bool) {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n >= 0 {
		if n > MaxMagicDelay.Seconds() {
			return MaxMagicDelay, true
		}
		return time.Duration(n * float64(time.Second)), true
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, true
	}
	return 0, false
}

// FailRule makes the next Count jobs that match it fail.
type FailRule struct {
	Count    int    `json:"count"`
	Modality string `json:"modality,omitempty"` // image, video, audio, 3d, encore ("" for any)
	Model    string `json:"model,omitempty"`    // model id or effect slug ("" for any)
	Stage    string `json:"stage,omitempty"`    // queued or processing (default)
	Code     string `json:"code,omitempty"`     // error code (default provider_error)
}

// faultState is the injected faults of one scope, kept in the file so that
// snapshots and restarts keep them: the global scope (every workspace) and
// each workspace that has faults of its own (a sandbox).
type faultState struct {
	FailNext      []FailRule `json:"fail_next,omitempty"`
	FailureRate   *float64   `json:"failure_rate,omitempty"` // overrides every model's rate
	FailPlatforms []string   `json:"fail_platforms,omitempty"`
}

func (f faultState) empty() bool {
	return len(f.FailNext) == 0 && f.FailureRate == nil && len(f.FailPlatforms) == 0
}

// GlobalFaults is the scope of the faults that apply to every workspace.
const GlobalFaults uint64 = 0

// faultsKey is where a scope's faults are kept: "state" for the global
// ones (as ever), the workspace id for a workspace's.
func faultsKey(ws uint64) []byte {
	if ws == GlobalFaults {
		return []byte("state")
	}
	return u64(ws)
}

func (t *tx) faults(ws uint64) (faultState, error) {
	var f faultState
	_, err := getJSON(t.b(bFaults), faultsKey(ws), &f)
	return f, err
}

func (t *tx) putFaults(ws uint64, f faultState) error {
	if ws != GlobalFaults && f.empty() {
		return t.b(bFaults).Delete(faultsKey(ws))
	}
	return putJSON(t.b(bFaults), faultsKey(ws), f)
}

// decideFate settles at creation whether a job will fail, and how: from the
// magic markers of its text, then the fail rules of its workspace, then the
// global ones, then the failure rate (its workspace's, else the global one,
// else the model's) drawn from the job's own random generator.
func (t *tx) decideFate(job *Job, lane, model string, rate float64, text string) error {
	mg := ParseMagic(text)
	if mg.Delay >= 0 {
		job.QueuedFor, job.ProcessFor = 0, int64(max(mg.Delay, time.Millisecond))
	}
	switch {
	case mg.Stuck:
		job.Fate = "stick"
		return nil
	case mg.Fail:
		job.Fate, job.FailStage = "fail", mg.FailStage
		job.Failure = problemFor(mg.FailCode)
		return nil
	}
	var override *float64
	for _, scope := range []uint64{job.WorkspaceID, GlobalFaults} {
		f, err := t.faults(scope)
		if err != nil {
			return err
		}
		for i, r := range f.FailNext {
			if (r.Modality == "" || r.Modality == lane) && (r.Model == "" || r.Model == model) {
				job.Fate, job.FailStage, job.Failure = "fail", or(r.Stage, StatusProcessing), problemFor(r.Code)
				if f.FailNext[i].Count--; f.FailNext[i].Count <= 0 {
					f.FailNext = append(f.FailNext[:i], f.FailNext[i+1:]...)
				}
				return t.putFaults(scope, f)
			}
		}
		if override == nil {
			override = f.FailureRate
		}
	}
	if override != nil {
		rate = *override
	}
	if rate > 0 && Rand(t.e.seed, "fate", job.ID).Float64() < rate {
		job.Fate, job.FailStage, job.Failure = "fail", StatusProcessing, problemFor("")
	}
	return nil
}

var problemMessages = map[string]string{
	"provider_error":       "The provider failed to generate this output.",
	"provider_unavailable": "The provider was unavailable; the job never started.",
	"content_policy":       "The provider refused the prompt under its content policy.",
	"timeout":              "The provider did not finish in time.",
}

func problemFor(code string) *Problem {
	if code == "" {
		code = "provider_error"
	}
	msg, ok := problemMessages[code]
	if !ok {
		msg = "The job failed (" + code + ")."
	}
	return &Problem{Code: code, Message: msg}
}

// Faults returns the injected faults of a scope: GlobalFaults, or a
// workspace's own.
func (e *Engine) Faults(ws uint64) (FaultsView, error) {
	var out FaultsView
	err := e.view(func(t *tx) error {
		f, err := t.faults(ws)
		out = FaultsView(f)
		return err
	})
	return out, err
}

// FaultsView is the injected faults as the control API shows them.
type FaultsView struct {
	FailNext      []FailRule `json:"fail_next"`
	FailureRate   *float64   `json:"failure_rate"`
	FailPlatforms []string   `json:"fail_platforms"`
}

// Empty reports whether no fault is set.
func (v FaultsView) Empty() bool { return faultState(v).empty() }

// changeFaults runs change on the faults of a scope: GlobalFaults or an
// existing workspace.
func (e *Engine) changeFaults(ws uint64, change func(*faultState)) error {
	return e.update(func(t *tx) error {
		if ws != GlobalFaults {
			if _, err := t.workspace(ws); err != nil {
				return err
			}
		}
		f, err := t.faults(ws)
		if err != nil {
			return err
		}
		change(&f)
		return t.putFaults(ws, f)
	})
}

// FailNext makes the next rule.Count matching jobs of a scope fail.
func (e *Engine) FailNext(ws uint64, rule FailRule) error {
	if rule.Count <= 0 {
		return &Error{Kind: EINVALID, Code: "validation_failed", Message: "count must be at least 1."}
	}
	if rule.Stage != "" && rule.Stage != StatusQueued && rule.Stage != StatusProcessing {
		return &Error{Kind: EINVALID, Code: "validation_failed", Message: "stage must be queued or processing."}
	}
	return e.changeFaults(ws, func(f *faultState) { f.FailNext = append(f.FailNext, rule) })
}

// SetFailureRate overrides every model's and effect's failure rate in a
// scope; nil goes back to the catalog's rates (or the global override).
func (e *Engine) SetFailureRate(ws uint64, rate *float64) error {
	if rate != nil && (*rate < 0 || *rate > 1) {
		return &Error{Kind: EINVALID, Code: "validation_failed", Message: "failure_rate must be between 0 and 1."}
	}
	return e.changeFaults(ws, func(f *faultState) { f.FailureRate = rate })
}

// ClearFaults removes the injected faults of a scope.
func (e *Engine) ClearFaults(ws uint64) error {
	return e.changeFaults(ws, func(f *faultState) { *f = faultState{} })
}

// ClearAllFaults removes the injected faults of every scope.
func (e *Engine) ClearAllFaults() error {
	return e.update(func(t *tx) error {
		if err := t.DeleteBucket(bFaults); err != nil {
			return err
		}
		_, err := t.CreateBucket(bFaults)
		return err
	})
}

// FailPlatform makes every delivery of a scope to a platform fail until
// cleared.
func (e *Engine) FailPlatform(ws uint64, platform string, fail bool) error {
	if !slices.Contains(fixtures.Platforms, platform) && platform != "all" {
		return InvalidError([]Violation{{In: "body", Field: "platform", Reason: fmt.Sprintf("unknown platform %q", platform), Allowed: anySlice(append(slices.Clone(fixtures.Platforms), "all"))}})
	}
	return e.changeFaults(ws, func(f *faultState) {
		f.FailPlatforms = slices.DeleteFunc(f.FailPlatforms, func(p string) bool { return p == platform })
		if fail {
			f.FailPlatforms = append(f.FailPlatforms, platform)
		}
	})
}
