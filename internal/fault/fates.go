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

// Moderated decides at creation whether the service's moderation stops a
// job of workspace ws, of lane (a modality, or "encore") and model: the
// first moderation rule that targets it, the workspace's before the global
// ones, counted and drawn like any rule. at is where: "creation" (refused,
// nothing charged) or "processing" (failed, refunded); "" when no rule
// strikes.
func (s *Set) Moderated(ws uint64, lane, model string) (at string) {
	if !s.Active() {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			if r.Kind != Moderation || (r.Modality != "" && r.Modality != lane) || (r.Model != "" && r.Model != model) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return or(r.At, "creation")
			}
		}
	}
	return ""
}

// FailedOutputs decides at creation how many of a generation's outputs
// fail by an output_failure rule of workspace ws, or a global one: 0 when
// none strikes. Only generations of two or more outputs are targeted, and
// at least one output completes.
func (s *Set) FailedOutputs(ws uint64, lane, model string, outputs int) int {
	if !s.Active() || outputs < 2 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			if r.Kind != OutputFailure || (r.Modality != "" && r.Modality != lane) || (r.Model != "" && r.Model != model) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return min(max(r.Outputs, 1), outputs-1)
			}
		}
	}
	return 0
}

// AccountDisconnected reports whether an account_disconnected rule of
// workspace ws, or a global one, disconnects the social account a
// delivery goes to: one naming its id, or its platform. The rule counts
// the delivery.
func (s *Set) AccountDisconnected(ws, account uint64, platform string) bool {
	if !s.Active() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			if r.Kind != AccountDisconnected || (r.SocialAccountID != 0 && r.SocialAccountID != account) || (r.Platform != "" && r.Platform != platform) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return true
			}
		}
	}
	return false
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
