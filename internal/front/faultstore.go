package front

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/sim"
)

// The faults of a scope, as the control API and the Go API show and change
// them (controlapi.Faults). Every fault is a rule of the one store,
// env.Rules (package fault): the shorthand endpoints (fail-next,
// failure-rate, platforms, latency, responses) make rules of its kinds,
// named by Via, and Faults shows those rules as the endpoints take them.

// ScopeName names a scope as Faults.Scope shows it.
func (env *Env) ScopeName(ws uint64) string {
	if ws == fault.Global {
		return "global"
	}
	if sb, ok := env.Eng.SandboxOf(ws); ok {
		return "sandbox " + sb.ID
	}
	return "workspace " + strconv.FormatUint(ws, 10)
}

// Faults returns every injected fault of a scope.
func (env *Env) Faults(ws uint64) (controlapi.Faults, error) {
	out := controlapi.Faults{Scope: env.ScopeName(ws), FailNext: []controlapi.FailRule{}, FailPlatforms: []string{},
		LatencyMS: map[string]int64{}, Forced: []controlapi.ForcedResponse{}, Rules: env.Rules.Rules(ws)}
	for _, r := range out.Rules {
		switch r.Via {
		case fault.ViaFailNext:
			out.FailNext = append(out.FailNext, controlapi.FailRule{Count: r.First - int(r.Hits), Modality: r.Modality, Model: r.Model, Stage: r.FailStage, Code: r.Code})
		case fault.ViaFailureRate:
			out.FailureRate = r.Rate
		case fault.ViaPlatforms:
			out.FailPlatforms = append(out.FailPlatforms, r.Platform)
		case fault.ViaLatency:
			out.LatencyMS[r.Operation] = *r.MS
		case fault.ViaResponses:
			out.Forced = append(out.Forced, controlapi.ForcedResponse{Operation: r.Operation, Status: r.Status, Remaining: r.First - int(r.Hits)})
		}
	}
	if ws != fault.Global {
		// What strikes the scope: its own rules, then the global ones.
		global := env.Rules.Rules(fault.Global)
		for _, r := range global {
			r.Scope = "global"
			out.Rules = append(out.Rules, r)
		}
		out.GlobalFaults = len(global) > 0
	}
	return out, nil
}

// ClearFaults removes the injected faults of a scope (fault.Global, or a
// workspace's own): every rule, whichever endpoint made it.
func (env *Env) ClearFaults(ws uint64) error {
	env.Rules.Clear(ws)
	return nil
}

// AddFaultRule checks a fault spec and keeps it as a rule of scope ws
// (fault.Global: every workspace's).
func (env *Env) AddFaultRule(ws uint64, spec fault.Spec) (fault.Rule, error) {
	if err := fault.Validate(&spec, "body", env.API.Has); err != nil {
		return fault.Rule{}, err
	}
	return env.Rules.Add(ws, spec)
}

// DeleteFaultRule removes a rule of scope ws.
func (env *Env) DeleteFaultRule(ws uint64, id string) error {
	if !env.Rules.Delete(ws, id) {
		return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No fault rule " + id + " in scope " + env.ScopeName(ws) + "."}
	}
	return nil
}

// FailNext makes the next rule.Count jobs of scope ws that match it fail: a
// rule of fault.JobFailure spent after that many.
func (env *Env) FailNext(ws uint64, rule controlapi.FailRule) error {
	if rule.Count <= 0 {
		return problem.InvalidError([]problem.Violation{{In: "body", Field: "count", Reason: "must be at least 1"}})
	}
	return env.addVia(ws, fault.ViaFailNext, fault.Spec{Kind: fault.JobFailure, Modality: rule.Modality, Model: rule.Model,
		FailStage: rule.Stage, Code: rule.Code, First: rule.Count})
}

// SetFailureRate makes the scope's one rule of fault.FailureRate, which
// stands in for every model's and effect's rate; nil removes it.
func (env *Env) SetFailureRate(ws uint64, rate *float64) error {
	every := func(fault.Spec) bool { return true }
	if rate == nil {
		env.Rules.Replace(ws, fault.ViaFailureRate, every, nil)
		return nil
	}
	_, err := env.replace(ws, fault.ViaFailureRate, fault.Spec{Kind: fault.FailureRate, Rate: rate}, every)
	return err
}

// FailPlatform makes every delivery of scope ws to a platform ("all" for
// every one) fail, a rule of fault.PlatformFailure; fail false removes it.
func (env *Env) FailPlatform(ws uint64, platform string, fail bool) error {
	spec := fault.Spec{Kind: fault.PlatformFailure, Platform: platform}
	if err := fault.Validate(&spec, "path", env.API.Has); err != nil {
		return err
	}
	same := func(s fault.Spec) bool { return s.Platform == platform }
	if !fail {
		env.Rules.Replace(ws, fault.ViaPlatforms, same, nil)
		return nil
	}
	_, err := env.replace(ws, fault.ViaPlatforms, spec, same)
	return err
}

// SetLatency makes the latency shorthand's rule of an operation ("*" for
// every one) in scope ws: a fixed latency on the answers of the service's
// operations, REST and MCP alike; 0 removes it.
func (env *Env) SetLatency(ws uint64, operation string, d time.Duration) error {
	same := func(s fault.Spec) bool { return s.Operation == operation }
	if d <= 0 {
		if operation != "*" && !env.API.Has(operation) {
			return problem.InvalidError([]problem.Violation{{In: "path", Field: "operation", Reason: fmt.Sprintf("unknown operation %q", operation)}})
		}
		env.Rules.Replace(ws, fault.ViaLatency, same, nil)
		return nil
	}
	ms := d.Milliseconds()
	r, err := env.replace(ws, fault.ViaLatency, fault.Spec{Kind: fault.Latency, Operation: operation, Distribution: "fixed", MS: &ms}, same)
	if err == nil && operation != "*" {
		// An operation's own latency is tried before every operation's,
		// whichever was set first.
		env.Rules.Before(ws, r.ID, func(o fault.Rule) bool { return o.Via == fault.ViaLatency && o.Operation == "*" })
	}
	return err
}

// ForceResponses answers the next count requests of an operation of
// openapi.json ("*" for any) by workspace ws (fault.Global: by any) with
// status 500, 503 or 429: a status rule spent after count hits.
func (env *Env) ForceResponses(ws uint64, operation string, status, count int) error {
	return env.addVia(ws, fault.ViaResponses, fault.Spec{Kind: fault.Status, Operation: operation, Status: status, First: max(1, count)})
}

// addVia checks a spec a shorthand made and keeps it as a rule.
func (env *Env) addVia(ws uint64, via string, spec fault.Spec) error {
	if err := fault.Validate(&spec, "body", env.API.Has); err != nil {
		return err
	}
	_, err := env.Rules.AddVia(ws, spec, via)
	return err
}

// replace checks a spec a shorthand made and keeps it in place of the
// rule that shorthand made for the same thing (same).
func (env *Env) replace(ws uint64, via string, spec fault.Spec, same func(fault.Spec) bool) (fault.Rule, error) {
	if err := fault.Validate(&spec, "body", env.API.Has); err != nil {
		return fault.Rule{}, err
	}
	return env.Rules.Replace(ws, via, same, &spec)
}

// AdoptLegacyFaults takes over, as rules made by their shorthands, the
// faults an older state file or snapshot kept in itself, so that none is
// lost when such a file is opened or restored.
func (env *Env) AdoptLegacyFaults() error {
	legacy, err := env.Eng.TakeLegacyFaults()
	if err != nil {
		return err
	}
	for _, ws := range slices.Sorted(maps.Keys(legacy)) {
		f := legacy[ws]
		for _, r := range f.FailNext {
			if err := env.FailNext(ws, controlapi.FailRule(r)); err != nil {
				return fmt.Errorf("fail rule of scope %d: %w", ws, err)
			}
		}
		if f.FailureRate != nil {
			if err := env.SetFailureRate(ws, f.FailureRate); err != nil {
				return fmt.Errorf("failure rate of scope %d: %w", ws, err)
			}
		}
		for _, p := range f.FailPlatforms {
			if err := env.FailPlatform(ws, p, true); err != nil {
				return fmt.Errorf("failing platform of scope %d: %w", ws, err)
			}
		}
	}
	return nil
}
