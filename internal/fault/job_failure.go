package fault

// JobFailure fails a job created while the rule stands, queued or
// processing.
const JobFailure = "job_failure"

// ViaFailNext names the shorthand POST /faults/fail-next: a job failure
// rule spent after count jobs.
const ViaFailNext = "fail-next"

// JobStages are where a job failure fails a job.
var JobStages = []string{"queued", "processing"}

func init() { Register(JobFailure, new(jobFailure)) }

type jobFailure struct {
	ModelTarget
	FailStage string `json:"stage,omitempty"`
	ErrorCode
}

func (k *jobFailure) Params() []*Param {
	return []*Param{
		Field(&k.FailStage, "Stage", "where the job fails: `processing` (default) or `queued` (it never starts).").Enum(anys(JobStages)...).Default("processing"),
		Note(&k.Code, "the failure's error code: `provider_error` (default), `provider_unavailable`, `content_policy`, `timeout`, or any other."),
	}
}

func (*jobFailure) About() About {
	return About{Stage: Fate, Targets: []string{TargetModality, TargetProbability, TargetFirst}, Modalities: JobModalities,
		Doc: "a job (a generation's or an Encore creation's) created while the rule stands fails, at `stage`, with `code`; its credits are refunded. " +
			"Decided at creation, in the simulation: the creation answers 201 as ever. `POST /faults/fail-next` makes one spent after `count` jobs.",
		Meets: "a job created while the rule stands fails, its credits refunded; the creation answers 201 as ever",
		Shorthands: []Shorthand{{Via: ViaFailNext, Endpoint: "POST /faults/fail-next",
			Doc: "a `" + JobFailure + "` rule spent after `count` jobs (`fail_next` shows those still to fail)"}}}
}

// FailsJob targets the jobs of its model.
func (k *jobFailure) FailsJob(j Job) bool { return k.TargetsModel(j.Model) }

// Failure is where and with what code.
func (k *jobFailure) Failure() (stage, code string) { return k.FailStage, k.Code }
