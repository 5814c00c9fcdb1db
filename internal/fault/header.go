package fault

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/problem"
)

// Header is the request header that asks for a fault on that request
// alone: a kind, then parameters as name=value, separated by semicolons:
//
//	Mock-Fault: truncate; after_bytes=1024
//	Mock-Fault: latency; distribution=lognormal; median_ms=200; sigma=0.5
//	Mock-Fault: reset; probability=0.5
//	Mock-Fault: evolve; reorder=false
const Header = "Mock-Fault"

// ParseHeader reads a Mock-Fault header's values into a spec and checks it.
// The targeting of rules (class, operation, modality, first) has no place
// on one request; probability has.
func ParseHeader(values []string, known func(string) bool) (Spec, error) {
	invalid := func(reason string) error {
		return problem.InvalidError([]problem.Violation{{In: "header", Field: Header, Reason: reason}})
	}
	if len(values) != 1 {
		return Spec{}, invalid("give one fault per request, in one header")
	}
	parts := strings.Split(values[0], ";")
	s := Spec{Kind: strings.TrimSpace(parts[0])}
	k := lookup(s.Kind)
	if k == nil {
		return Spec{}, problem.InvalidError([]problem.Violation{{In: "header", Field: Header,
			Reason: fmt.Sprintf("unknown fault kind %q", s.Kind), Allowed: anys(RequestKinds)}})
	}
	if k.Classes == nil {
		return Spec{}, invalid(fmt.Sprintf("%s is decided in the simulation, for jobs and deliveries, not for one request: add it as a rule (POST /_mock/faults/rules)", s.Kind))
	}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return Spec{}, invalid(fmt.Sprintf("parameter %q is not name=value", strings.TrimSpace(p)))
		}
		if seen[name] {
			return Spec{}, invalid(fmt.Sprintf("parameter %s is given twice", name))
		}
		seen[name] = true
		if err := setParam(&s, name, value); err != nil {
			return Spec{}, invalid(fmt.Sprintf("parameter %s: %v", name, err))
		}
	}
	if err := Validate(&s, "header", known); err != nil {
		// Name the header and the parameter: "Mock-Fault: after_bytes".
		e := problem.AsError(err)
		if vs, ok := e.Details["violations"].([]problem.Violation); ok {
			for i := range vs {
				vs[i].Field = Header + ": " + vs[i].Field
			}
			return Spec{}, problem.InvalidError(vs)
		}
		return Spec{}, err
	}
	return s, nil
}

// setParam sets the parameter name of a spec from a header's value.
func setParam(s *Spec, name, value string) error {
	i64 := func() (*int64, error) {
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", value)
		}
		return &n, nil
	}
	f64 := func() (*float64, error) {
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", value)
		}
		return &f, nil
	}
	var err error
	var n *int64
	switch name {
	case "probability":
		s.Probability, err = f64()
	case "after_bytes":
		s.AfterBytes, err = i64()
	case "after_fraction":
		s.AfterFraction, err = f64()
	case "bytes_per_second":
		if n, err = i64(); err == nil {
			s.BytesPerSecond = *n
			if *n == 0 {
				return fmt.Errorf("must be positive")
			}
		}
	case "bytes":
		if n, err = i64(); err == nil {
			s.Bytes = *n
			if *n == 0 {
				return fmt.Errorf("must be positive")
			}
		}
	case "distribution":
		s.Distribution = value
	case "ms":
		s.MS, err = i64()
	case "min_ms":
		s.MinMS, err = i64()
	case "max_ms":
		s.MaxMS, err = i64()
	case "median_ms":
		s.MedianMS, err = i64()
	case "sigma":
		s.Sigma, err = f64()
	case "status":
		if n, err = i64(); err == nil {
			s.Status = int(*n)
		}
	case "ttl_seconds":
		s.TTLSeconds, err = i64()
	case "expired_status":
		if n, err = i64(); err == nil {
			s.ExpiredStatus = int(*n)
		}
	case "retry_after_seconds":
		s.RetryAfterSeconds, err = i64()
	case "fields", "enums", "headers", "reorder":
		b, perr := strconv.ParseBool(value)
		if perr != nil {
			return fmt.Errorf("%q is not true or false", value)
		}
		*map[string]**bool{"fields": &s.Fields, "enums": &s.Enums, "headers": &s.Headers, "reorder": &s.Reorder}[name] = &b
	case "class", "operation", "modality", "first":
		return fmt.Errorf("targets rules of the control API; a header's fault is its own request's")
	default:
		return fmt.Errorf("unknown parameter")
	}
	return err
}
