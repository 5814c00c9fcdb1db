package fault

// OutputFailure fails some outputs of a generation, each refunded.
const OutputFailure = "output_failure"

// MaxOutputs is the most outputs that fail: all but one of the most a
// generation has (4).
const MaxOutputs = 3

func init() { Register(OutputFailure, new(outputFailure)) }

type outputFailure struct {
	ModelTarget
	Outputs int `json:"outputs,omitempty"`
}

func (k *outputFailure) Params() []*Param {
	return []*Param{Field(&k.Outputs, "Outputs", "how many outputs of a generation fail; 1 when absent, at most all but one.").Min(1).Max(MaxOutputs).Default(1)}
}

func (*outputFailure) About() About {
	return About{Stage: Fate, Targets: []string{TargetModality, TargetProbability, TargetFirst},
		Doc: "`outputs` of a generation of two or more outputs (1 by default, at most all but one) fail with `output_failed` while the others complete; " +
			"each failed output's credits (the model's `credits_per_output`) are refunded, and the generation is `completed`. Generations of one output are not targeted.",
		Meets: "some outputs of a generation of two or more fail with `output_failed`, each refunded; the generation is `completed`"}
}

// FailsOutputs is outputs (1 by default) of a generation of its model.
func (k *outputFailure) FailsOutputs(j Job) int {
	if !k.TargetsModel(j.Model) {
		return 0
	}
	return max(k.Outputs, 1)
}
