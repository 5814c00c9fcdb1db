package fault

// Moderation stops a job by the service's moderation: refused at
// creation, or failed later.
const Moderation = "moderation"

// ModerationPoints are where a moderation stops a job (sim's
// ModeratedAtCreation and ModeratedWhileProcessing): at its creation
// (refused, nothing charged) or while processing (failed, refunded).
var ModerationPoints = []string{"creation", "processing"}

func init() { Register(Moderation, new(moderation)) }

type moderation struct {
	ModelTarget
	At string `json:"at,omitempty"`
}

func (k *moderation) Params() []*Param {
	return []*Param{Field(&k.At, "At", "`creation` (default): the creation is refused with 422 `content_moderated`, nothing charged; "+
		"`processing`: the job is accepted and charged, then fails with `content_moderated` and is refunded.").Enum(anys(ModerationPoints)...).Default(ModerationPoints[0])}
}

func (*moderation) About() About {
	return About{Stage: Fate, Targets: []string{TargetModality, TargetProbability, TargetFirst}, Modalities: JobModalities,
		Doc: "the service's moderation stops a job (a generation's or an Encore creation's) created while the rule stands: at `at` `creation` (default) the creation answers 422 " +
			"`content_moderated`, nothing is created or charged and the ledger does not move; at `processing` it is accepted and charged, then fails with `content_moderated` and its credits are refunded.",
		Meets: "the service's moderation stops a job: at `creation` a 422 `content_moderated`, nothing charged; at `processing` a 201, then `failed` with `content_moderated`, refunded"}
}

// Moderates targets the jobs of its model.
func (k *moderation) Moderates(j Job) bool { return k.TargetsModel(j.Model) }

// ModeratedAt is where: at creation by default.
func (k *moderation) ModeratedAt() string {
	if k.At == "" {
		return ModerationPoints[0]
	}
	return k.At
}
