package sim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
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
//	[mock:moderation]            refused at creation: 422 content_moderated, nothing charged
//	[mock:moderation=processing] accepted and charged, then failed with content_moderated, refunded
//	[mock:fail-outputs=K]        K outputs of the generation fail (at most all but one), each refunded
//	[mock:disconnected=ACCOUNT]  publications: the delivery to ACCOUNT (an id, or a platform) fails with account_disconnected
var magicPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[mock:([a-z-]+)(?:=([A-Za-z0-9_.-]+))?\]`) })

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
	Moderation    string   // creation or processing; "" when not asked for
	FailOutputs   int      // how many outputs fail
	Disconnected  []string // social account ids or platforms
}

// ParseMagic reads the magic markers of a text.
func ParseMagic(text string) Magic {
	m := Magic{Delay: -1}
	if !strings.Contains(text, "[mock:") {
		return m
	}
	for _, sub := range magicPattern().FindAllStringSubmatch(text, -1) {
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
		case "moderation":
			m.Moderation = ModeratedAtCreation
			if arg == ModeratedWhileProcessing {
				m.Moderation = arg
			}
		case "fail-outputs":
			if n, err := strconv.Atoi(arg); err == nil && n > 0 {
				m.FailOutputs = n
			}
		case "disconnected":
			if arg != "" {
				m.Disconnected = append(m.Disconnected, strings.ToLower(arg))
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

// Fates decides the injected failures the simulation applies: a job's
// fate at its creation and a publication's deliveries. The server's fault
// store (package internal/fault) is the one implementation; nil injects
// none. Its rules are the control plane's, kept beside the state, not in
// it: a snapshot holds none.
type Fates interface {
	// JobFate decides whether a job of workspace ws, of lane (a modality,
	// or "encore") and model, fails by a rule: failed, at stage with code
	// ("" for the defaults); decided reports whether a rule decided (false:
	// the model's own rate does). u is the job's own uniform draw.
	JobFate(ws uint64, lane, model string, u float64) (stage, code string, failed, decided bool)
	// PlatformFails reports whether deliveries of workspace ws to platform fail.
	PlatformFails(ws uint64, platform string) bool
	// Moderated decides whether moderation stops a job of workspace ws:
	// ModeratedAtCreation, ModeratedWhileProcessing, or "" (it does not).
	Moderated(ws uint64, lane, model string) string
	// FailedOutputs decides how many of a generation's outputs fail (0:
	// none; never all).
	FailedOutputs(ws uint64, lane, model string, outputs int) int
	// AccountDisconnected reports whether the delivery of workspace ws to
	// social account (of platform) finds it disconnected.
	AccountDisconnected(ws, account uint64, platform string) bool
}

// Where moderation stops a job.
const (
	ModeratedAtCreation      = "creation"   // refused: 422 content_moderated, nothing charged
	ModeratedWhileProcessing = "processing" // accepted, charged, failed with content_moderated, refunded
)

// Error codes of the surprises a client meets in production.
const (
	CodeContentModerated    = "content_moderated"
	CodeOutputFailed        = "output_failed"
	CodeAccountDisconnected = "account_disconnected"
)

// noFates injects no failure.
type noFates struct{}

func (noFates) JobFate(uint64, string, string, float64) (string, string, bool, bool) {
	return "", "", false, false
}
func (noFates) PlatformFails(uint64, string) bool               { return false }
func (noFates) Moderated(uint64, string, string) string         { return "" }
func (noFates) FailedOutputs(uint64, string, string, int) int   { return 0 }
func (noFates) AccountDisconnected(uint64, uint64, string) bool { return false }

// LegacyFaults are the faults an older state file kept in itself, for one
// scope (GlobalFaults or a workspace): the server takes them over as rules
// of its fault store (TakeLegacyFaults), so that none is lost.
type LegacyFaults struct {
	FailNext      []LegacyFailRule `json:"fail_next,omitempty"`
	FailureRate   *float64         `json:"failure_rate,omitempty"`
	FailPlatforms []string         `json:"fail_platforms,omitempty"`
}

// LegacyFailRule is a fail rule of an older state file.
type LegacyFailRule struct {
	Count    int    `json:"count"`
	Modality string `json:"modality,omitempty"`
	Model    string `json:"model,omitempty"`
	Stage    string `json:"stage,omitempty"`
	Code     string `json:"code,omitempty"`
}

// GlobalFaults is the scope of the faults that apply to every workspace.
const GlobalFaults uint64 = 0

// TakeLegacyFaults reads the faults an older state file (or snapshot) kept
// in itself, by scope, and removes them from it: the caller keeps them from
// now on.
func (e *Engine) TakeLegacyFaults() (map[uint64]LegacyFaults, error) {
	out := map[uint64]LegacyFaults{}
	found := false
	if err := e.read(func(btx *bolt.Tx) error {
		b := btx.Bucket(bFaults)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var f LegacyFaults
			if err := json.Unmarshal(v, &f); err != nil {
				return fmt.Errorf("faults of scope %x: %w", k, err)
			}
			ws := GlobalFaults
			if string(k) != "state" && len(k) == 8 {
				ws = binary.BigEndian.Uint64(k)
			}
			if len(f.FailNext) > 0 || f.FailureRate != nil || len(f.FailPlatforms) > 0 {
				out[ws], found = f, true
			}
			return nil
		})
	}); err != nil || !found {
		return nil, err
	}
	return out, e.update(func(t *tx) error {
		if err := t.DeleteBucket(bFaults); err != nil {
			return err
		}
		_, err := t.CreateBucket(bFaults)
		return err
	})
}

// moderation decides at a job's creation whether the service's moderation
// stops it: the text's marker, else a moderation rule (Fates).
// ModeratedAtCreation refuses the creation (Moderated's error), before
// anything is charged; ModeratedWhileProcessing goes to decideFate.
func (t *tx) moderation(ws uint64, lane, model, text string) string {
	if m := ParseMagic(text).Moderation; m != "" {
		return m
	}
	return t.e.fates.Moderated(ws, lane, model)
}

// Moderated is the error of a creation the service's moderation refuses:
// 422 content_moderated; nothing was created or charged.
func Moderated(what string) *Error {
	return &Error{Kind: EUNPROCESSABLE, Code: CodeContentModerated,
		Message: "The " + what + " was blocked by the service's content moderation; nothing was created or charged."}
}

// decideFate settles at creation whether a job will fail, and how: from the
// magic markers of its text, then moderation (moderated, from moderation),
// then the fault rules (Fates: its workspace's job_failure rules, then the
// global ones, then a failure_rate rule), else the model's rate, drawn from
// the job's own random generator. A generation of two or more outputs that
// does not fail may lose some of them (FailOutputs): its text's marker, or
// an output_failure rule.
//
// The fault store lives beside the state, not in the transaction: when a
// group commit fails (an I/O error, or another write of the group
// panicked) and each write runs again alone, a job_failure rule's count the
// first attempt took is not given back.
func (t *tx) decideFate(job *Job, lane, model string, rate float64, text, moderated string) error {
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
	case moderated == ModeratedWhileProcessing:
		job.Fate, job.FailStage, job.Failure = "fail", StatusProcessing, problemFor(CodeContentModerated)
		return nil
	}
	stage, code, failed, decided := t.e.fates.JobFate(job.WorkspaceID, lane, model, Rand(t.e.seed, "fate", job.ID).Float64())
	switch {
	case failed:
		job.Fate, job.FailStage, job.Failure = "fail", or(stage, StatusProcessing), problemFor(code)
		return nil
	case !decided && rate > 0 && Rand(t.e.seed, "fate", job.ID).Float64() < rate:
		job.Fate, job.FailStage, job.Failure = "fail", StatusProcessing, problemFor("")
		return nil
	}
	if n := len(job.AssetIDs); job.Type == "generation" && n > 1 {
		k := mg.FailOutputs
		if k == 0 {
			k = t.e.fates.FailedOutputs(job.WorkspaceID, lane, model, n)
		}
		job.FailOutputs = min(k, n-1)
	}
	return nil
}

var problemMessages = map[string]string{
	"provider_error":       "The provider failed to generate this output.",
	"provider_unavailable": "The provider was unavailable; the job never started.",
	"content_policy":       "The provider refused the prompt under its content policy.",
	"timeout":              "The provider did not finish in time.",
	CodeContentModerated:   "The prompt was blocked by the service's content moderation; the credits were refunded.",
	CodeOutputFailed:       "This output failed; its credits were refunded.",
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
