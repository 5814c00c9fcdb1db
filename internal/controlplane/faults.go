package controlplane

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
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
// Plane.Rules (package fault): the shorthand endpoints (fail-next,
// failure-rate, platforms, latency, responses) make rules of its kinds,
// named by Via, and Faults shows those rules as the endpoints take them.

// ScopeName names a scope as Faults.Scope shows it.
func (p *Plane) ScopeName(ws uint64) string {
	if ws == fault.Global {
		return "global"
	}
	if sb, ok := p.Eng.SandboxOf(ws); ok {
		return "sandbox " + sb.ID
	}
	return "workspace " + strconv.FormatUint(ws, 10)
}

// Faults returns every injected fault of a scope.
func (p *Plane) Faults(ws uint64) (controlapi.Faults, error) {
	out := controlapi.Faults{Scope: p.ScopeName(ws), FailNext: []controlapi.FailRule{}, FailPlatforms: []string{},
		LatencyMS: map[string]int64{}, Forced: []controlapi.ForcedResponse{}, Rules: p.Rules.Rules(ws)}
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
		global := p.Rules.Rules(fault.Global)
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
func (p *Plane) ClearFaults(ws uint64) error {
	p.Rules.Clear(ws)
	return nil
}

// AddFaultRule checks a fault spec and keeps it as a rule of scope ws
// (fault.Global: every workspace's).
func (p *Plane) AddFaultRule(ws uint64, spec fault.Spec) (fault.Rule, error) {
	if err := fault.Validate(&spec, "body", p.Service); err != nil {
		return fault.Rule{}, err
	}
	return p.Rules.Add(ws, spec)
}

// DeleteFaultRule removes a rule of scope ws.
func (p *Plane) DeleteFaultRule(ws uint64, id string) error {
	if !p.Rules.Delete(ws, id) {
		return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No fault rule " + id + " in scope " + p.ScopeName(ws) + "."}
	}
	return nil
}

// FailNext makes the next rule.Count jobs of scope ws that match it fail: a
// rule of fault.JobFailure spent after that many.
func (p *Plane) FailNext(ws uint64, rule controlapi.FailRule) error {
	if rule.Count <= 0 {
		return problem.InvalidError([]problem.Violation{{In: "body", Field: "count", Reason: "must be at least 1"}})
	}
	return p.addVia(ws, fault.ViaFailNext, fault.Spec{Kind: fault.JobFailure, Modality: rule.Modality, Model: rule.Model,
		FailStage: rule.Stage, Code: rule.Code, First: rule.Count})
}

// SetFailureRate makes the scope's one rule of fault.FailureRate, which
// stands in for every model's and effect's rate; nil removes it.
func (p *Plane) SetFailureRate(ws uint64, rate *float64) error {
	every := func(fault.Spec) bool { return true }
	if rate == nil {
		p.Rules.Replace(ws, fault.ViaFailureRate, every, nil)
		return nil
	}
	_, err := p.replace(ws, fault.ViaFailureRate, fault.Spec{Kind: fault.FailureRate, Rate: rate}, every)
	return err
}

// FailPlatform makes every delivery of scope ws to a platform ("all" for
// every one) fail, a rule of fault.PlatformFailure; fail false removes it.
func (p *Plane) FailPlatform(ws uint64, platform string, fail bool) error {
	spec := fault.Spec{Kind: fault.PlatformFailure, Platform: platform}
	if err := fault.Validate(&spec, "path", p.Service); err != nil {
		return err
	}
	same := func(s fault.Spec) bool { return s.Platform == platform }
	if !fail {
		p.Rules.Replace(ws, fault.ViaPlatforms, same, nil)
		return nil
	}
	_, err := p.replace(ws, fault.ViaPlatforms, spec, same)
	return err
}

// SetLatency makes the latency shorthand's rule of an operation ("*" for
// every one) in scope ws: a fixed latency on the answers of the service's
// operations, REST and MCP alike; 0 removes it.
func (p *Plane) SetLatency(ws uint64, operation string, d time.Duration) error {
	same := func(s fault.Spec) bool { return s.Operation == operation }
	if d <= 0 {
		if operation != "*" && !p.Service.Has(operation) {
			return problem.InvalidError([]problem.Violation{{In: "path", Field: "operation", Reason: fmt.Sprintf("unknown operation %q", operation)}})
		}
		p.Rules.Replace(ws, fault.ViaLatency, same, nil)
		return nil
	}
	ms := d.Milliseconds()
	r, err := p.replace(ws, fault.ViaLatency, fault.Spec{Kind: fault.Latency, Operation: operation, Distribution: "fixed", MS: &ms}, same)
	if err == nil && operation != "*" {
		// An operation's own latency is tried before every operation's,
		// whichever was set first.
		p.Rules.Before(ws, r.ID, func(o fault.Rule) bool { return o.Via == fault.ViaLatency && o.Operation == "*" })
	}
	return err
}

// ForceResponses answers the next count requests of an operation of
// openapi.json ("*" for any) by workspace ws (fault.Global: by any) with
// status, one the operation declares (an error status every operation
// declares, for "*"), in the spec's error object: a status rule spent
// after count hits.
func (p *Plane) ForceResponses(ws uint64, operation string, status, count int) error {
	return p.Force(ws, fault.Spec{Kind: fault.Status, Operation: operation, Status: status, First: max(1, count)})
}

// Force keeps a status rule that the shorthand POST /faults/responses
// made (its code, message, body or example; First its count).
func (p *Plane) Force(ws uint64, spec fault.Spec) error {
	return p.addVia(ws, fault.ViaResponses, spec)
}

// addVia checks a spec a shorthand made and keeps it as a rule.
func (p *Plane) addVia(ws uint64, via string, spec fault.Spec) error {
	if err := fault.Validate(&spec, "body", p.Service); err != nil {
		return err
	}
	_, err := p.Rules.AddVia(ws, spec, via)
	return err
}

// replace checks a spec a shorthand made and keeps it in place of the
// rule that shorthand made for the same thing (same).
func (p *Plane) replace(ws uint64, via string, spec fault.Spec, same func(fault.Spec) bool) (fault.Rule, error) {
	if err := fault.Validate(&spec, "body", p.Service); err != nil {
		return fault.Rule{}, err
	}
	return p.Rules.Replace(ws, via, same, &spec)
}

// AdoptLegacyFaults takes over, as rules made by their shorthands, the
// faults an older state file or snapshot kept in itself, so that none is
// lost when such a file is opened or restored.
func (p *Plane) AdoptLegacyFaults() error {
	legacy, err := p.Eng.TakeLegacyFaults()
	if err != nil {
		return err
	}
	for _, ws := range slices.Sorted(maps.Keys(legacy)) {
		f := legacy[ws]
		for _, r := range f.FailNext {
			if err := p.FailNext(ws, controlapi.FailRule(r)); err != nil {
				return fmt.Errorf("fail rule of scope %d: %w", ws, err)
			}
		}
		if f.FailureRate != nil {
			if err := p.SetFailureRate(ws, f.FailureRate); err != nil {
				return fmt.Errorf("failure rate of scope %d: %w", ws, err)
			}
		}
		for _, platform := range f.FailPlatforms {
			if err := p.FailPlatform(ws, platform, true); err != nil {
				return fmt.Errorf("failing platform of scope %d: %w", ws, err)
			}
		}
	}
	return nil
}

// --- the fault operations of control.json: each answers with the scope's
// faults as they then are (a new rule with itself)

func (r *request) faults() (int, any, error) {
	f, err := r.p.Faults(r.scope.WS)
	return http.StatusOK, f, err
}

func getFaults(r *request, _ none) (int, any, error) { return r.faults() }

func clearFaults(r *request, _ none) (int, any, error) {
	if err := r.p.ClearFaults(r.scope.WS); err != nil {
		return 0, nil, err
	}
	return r.faults()
}

type failNextInput struct {
	Rule controlapi.FailRule `body:""`
}

func failNext(r *request, in failNextInput) (int, any, error) {
	if err := r.p.FailNext(r.scope.WS, in.Rule); err != nil {
		return 0, nil, err
	}
	return r.faults()
}

type failureRateInput struct {
	Body struct {
		Rate *float64 `json:"rate"`
	} `body:""`
}

func failureRate(r *request, in failureRateInput) (int, any, error) {
	if err := r.p.SetFailureRate(r.scope.WS, in.Body.Rate); err != nil {
		return 0, nil, err
	}
	return r.faults()
}

type platformInput struct {
	Platform string `path:"platform"`
}

func platform(fail bool) op[platformInput] {
	return func(r *request, in platformInput) (int, any, error) {
		if err := r.p.FailPlatform(r.scope.WS, in.Platform, fail); err != nil {
			return 0, nil, err
		}
		return r.faults()
	}
}

type latencyInput struct {
	Operation string `path:"operation"`
	Body      struct {
		MS int64 `json:"ms"`
	} `body:""`
}

type clearLatencyInput struct {
	Operation string `path:"operation"`
}

func setLatency(r *request, in latencyInput) (int, any, error) {
	if err := r.p.SetLatency(r.scope.WS, in.Operation, time.Duration(in.Body.MS)*time.Millisecond); err != nil {
		return 0, nil, err
	}
	return r.faults()
}

func clearLatency(r *request, in clearLatencyInput) (int, any, error) {
	if err := r.p.SetLatency(r.scope.WS, in.Operation, 0); err != nil {
		return 0, nil, err
	}
	return r.faults()
}

type forceInput struct {
	Body struct {
		Operation string          `json:"operation"`
		Status    int             `json:"status"`
		Count     int             `json:"count"`
		Code      string          `json:"code"`
		Message   string          `json:"message"`
		Example   string          `json:"example"`
		Body      json.RawMessage `json:"body"`
		Drift     bool            `json:"drift"`
	} `body:""`
}

func force(r *request, in forceInput) (int, any, error) {
	b := in.Body
	if err := r.p.Force(r.scope.WS, fault.Spec{Kind: fault.Status, Operation: b.Operation, Status: b.Status, Code: b.Code,
		Message: b.Message, Example: b.Example, Body: b.Body, Drift: b.Drift, First: max(1, b.Count)}); err != nil {
		return 0, nil, err
	}
	return r.faults()
}

type addRuleInput struct {
	Spec fault.Spec `body:""`
}

func addFaultRule(r *request, in addRuleInput) (int, any, error) {
	rule, err := r.p.AddFaultRule(r.scope.WS, in.Spec)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, rule, nil
}

type ruleInput struct {
	Rule string `path:"rule"`
}

func deleteFaultRule(r *request, in ruleInput) (int, any, error) {
	if err := r.p.DeleteFaultRule(r.scope.WS, in.Rule); err != nil {
		return 0, nil, err
	}
	return r.faults()
}
