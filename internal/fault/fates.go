package fault

// The stages the simulation decides: a job's fate at its creation and a
// publication's deliveries. The engine asks the server's Set through
// sim.Fates, which these methods implement.

// JobFate decides at creation whether a job of workspace ws fails by a
// rule, the workspace's before the global ones: the first job_failure rule
// that targets the job's lane (its modality, or "encore") and model
// strikes, counted and drawn like any rule; else the first failure_rate
// rule stands in for the model's own rate, and the job fails when u, drawn
// by the engine from the seed and the job's id, is below it. failed says
// whether the job fails; stage and code how ("" for the defaults: while
// processing, provider_error); decided whether a rule decided at all
// (false: the model's own rate applies).
func (s *Set) JobFate(ws uint64, lane, model string, u float64) (stage, code string, failed, decided bool) {
	if !s.Active() {
		return "", "", false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			if r.Kind != JobFailure || (r.Modality != "" && r.Modality != lane) || (r.Model != "" && r.Model != model) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return r.FailStage, r.Code, true, true
			}
		}
	}
	for _, sc := range s.tried(ws) {
		for _, r := range sc.rules {
			if r.Kind != FailureRate {
				continue
			}
			r.Matched++
			if u < *r.Rate {
				s.hit(r)
				return "", "", true, true
			}
			return "", "", false, true
		}
	}
	return "", "", false, false
}

// PlatformFails reports whether a platform_failure rule of workspace ws,
// or a global one, fails a delivery to platform: one naming it, or "all".
// The rule counts the delivery.
func (s *Set) PlatformFails(ws uint64, platform string) bool {
	if !s.Active() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for _, r := range sc.rules {
			if r.Kind == PlatformFailure && (r.Platform == platform || r.Platform == "all") {
				r.Matched++
				s.hit(r)
				return true
			}
		}
	}
	return false
}
