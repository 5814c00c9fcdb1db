package fault

// The stages the simulation decides: a job's fate at its creation and a
// publication's deliveries. The engine asks the server's Set through
// sim.Fates, which these methods implement; each of its questions is
// answered by the kinds that implement its interface below, a rule of the
// workspace before the global ones, each counted and drawn like any rule.

// A Job is a job at its creation, as the kinds of the fate stage judge it.
type Job struct {
	// Lane is its modality, or "encore" for an Encore creation: what a
	// rule's modality targets.
	Lane string
	// Model is its model id or effect slug.
	Model string
}

// The questions of sim.Fates, each a kind's method.
type (
	// A jobFailer fails the jobs it targets (JobFate).
	jobFailer interface {
		FailsJob(j Job) bool
		// Failure is how: the stage and the code ("" for the defaults).
		Failure() (stage, code string)
	}
	// A rateFailer stands in for the models' own failure rates (JobFate).
	rateFailer interface {
		FailureRate() float64
	}
	// A moderator stops the jobs it targets (Moderated).
	moderator interface {
		Moderates(j Job) bool
		// ModeratedAt is where: sim.ModeratedAtCreation or
		// sim.ModeratedWhileProcessing.
		ModeratedAt() string
	}
	// An outputFailer fails outputs of the generations it targets
	// (FailedOutputs).
	outputFailer interface {
		// FailsOutputs is how many outputs of j fail (the Set keeps one
		// whole); 0 when it does not target j.
		FailsOutputs(j Job) int
	}
	// A platformFailer fails the deliveries to a platform (PlatformFails).
	platformFailer interface {
		FailsPlatform(platform string) bool
	}
	// A disconnector finds social accounts disconnected
	// (AccountDisconnected).
	disconnector interface {
		Disconnects(account uint64, platform string) bool
	}
)

// answersFates reports whether a kind answers a question of stage s.
func answersFates(k Kind, s Stage) bool {
	switch k.(type) {
	case jobFailer, rateFailer, moderator, outputFailer:
		return s == Fate
	case platformFailer, disconnector:
		return s == Publish
	}
	return false
}

// targetsLane reports whether a rule's modality targets a job's lane.
func (r *rule) targetsLane(lane string) bool { return r.Modality == "" || r.Modality == lane }

// JobFate decides at creation whether a job of workspace ws fails by a
// rule, the workspace's before the global ones: the first jobFailer rule
// that targets the job strikes, counted and drawn like any rule; else the
// first rateFailer rule stands in for the model's own rate, and the job
// fails when u, drawn by the engine from the seed and the job's id, is
// below it. failed says whether the job fails; stage and code how (""
// for the defaults: while processing, provider_error); decided whether a
// rule decided at all (false: the model's own rate applies).
func (s *Set) JobFate(ws uint64, lane, model string, u float64) (stage, code string, failed, decided bool) {
	if !s.Active() {
		return "", "", false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := Job{Lane: lane, Model: model}
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			k, ok := r.kind.(jobFailer)
			if !ok || !r.targetsLane(lane) || !k.FailsJob(j) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				stage, code = k.Failure()
				return stage, code, true, true
			}
		}
	}
	for _, sc := range s.tried(ws) {
		for _, r := range sc.rules {
			k, ok := r.kind.(rateFailer)
			if !ok {
				continue
			}
			r.Matched++
			if u < k.FailureRate() {
				s.hit(r)
				return "", "", true, true
			}
			return "", "", false, true
		}
	}
	return "", "", false, false
}

// PlatformFails reports whether a platformFailer rule of workspace ws, or
// a global one, fails a delivery to platform. The rule counts the
// delivery.
func (s *Set) PlatformFails(ws uint64, platform string) bool {
	if !s.Active() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for _, r := range sc.rules {
			if k, ok := r.kind.(platformFailer); ok && k.FailsPlatform(platform) {
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
// first moderator rule that targets it, the workspace's before the global
// ones, counted and drawn like any rule. at is where (creation: refused,
// nothing charged; processing: failed, refunded); "" when no rule
// strikes.
func (s *Set) Moderated(ws uint64, lane, model string) (at string) {
	if !s.Active() {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := Job{Lane: lane, Model: model}
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			k, ok := r.kind.(moderator)
			if !ok || !r.targetsLane(lane) || !k.Moderates(j) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return k.ModeratedAt()
			}
		}
	}
	return ""
}

// FailedOutputs decides at creation how many of a generation's outputs
// fail by an outputFailer rule of workspace ws, or a global one: 0 when
// none strikes. At least one output completes.
func (s *Set) FailedOutputs(ws uint64, lane, model string, outputs int) int {
	if !s.Active() || outputs < 2 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := Job{Lane: lane, Model: model}
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			k, ok := r.kind.(outputFailer)
			if !ok || !r.targetsLane(lane) {
				continue
			}
			n := k.FailsOutputs(j)
			if n == 0 {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return min(n, outputs-1)
			}
		}
	}
	return 0
}

// AccountDisconnected reports whether a disconnector rule of workspace
// ws, or a global one, finds the social account a delivery goes to
// disconnected, counted and drawn like any rule.
func (s *Set) AccountDisconnected(ws, account uint64, platform string) bool {
	if !s.Active() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			if k, ok := r.kind.(disconnector); !ok || !k.Disconnects(account, platform) {
				continue
			}
			if _, ok := s.strike(sc, i); ok {
				return true
			}
		}
	}
	return false
}
