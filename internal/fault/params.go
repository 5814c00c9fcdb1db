package fault

// The parameters several kinds take, each declared once, in a small struct
// those kinds embed. A kind may say something of its own of one (Note).

// DefaultFraction is where a body stops when a Cut gives neither bound.
const DefaultFraction = 0.5

// CutBytes is where a delivery kind stops the body it sends, in bytes.
type CutBytes struct {
	AfterBytes *int64 `json:"after_bytes,omitempty"`
}

// Params declares after_bytes.
func (c *CutBytes) Params() []*Param {
	return []*Param{Field(&c.AfterBytes, "After bytes", "the bytes of the body sent before the break.").Min(0).Format("int64")}
}

// Cut is where a delivery kind stops the body it sends: in bytes, or as a
// fraction of it.
type Cut struct {
	CutBytes
	AfterFraction *float64 `json:"after_fraction,omitempty"`
}

// Params declares after_fraction.
func (c *Cut) Params() []*Param {
	return []*Param{
		Field(&c.AfterFraction, "Or after fraction", "the fraction of the body sent before the break (instead of `after_bytes`); 0.5 when neither is given.").Min(0).Below(1),
	}
}

// Check refuses both bounds at once.
func (c *Cut) Check(v *Checks) {
	if c.AfterBytes != nil && c.AfterFraction != nil {
		v.Bad(&c.AfterFraction, "give after_bytes or after_fraction, not both")
	}
}

// At is where a body of n bytes stops: after_bytes, or after_fraction of
// it, or else DefaultFraction of it; never past its end.
func (c *Cut) At(n int64) int64 {
	switch {
	case c.AfterBytes != nil:
		return min(*c.AfterBytes, n)
	case c.AfterFraction != nil:
		return int64(float64(n) * *c.AfterFraction)
	}
	return int64(float64(n) * DefaultFraction)
}

// MaxModel bounds a model id or effect slug.
const MaxModel = 200

// ModelTarget narrows a kind of jobs to a model.
type ModelTarget struct {
	Model string `json:"model,omitempty"`
}

// Params declares the model.
func (m *ModelTarget) Params() []*Param {
	return []*Param{Field(&m.Model, "Model", "only jobs of this model id or effect slug; absent: any.").Length(1, MaxModel)}
}

// TargetsModel reports whether a job of model is targeted.
func (m *ModelTarget) TargetsModel(model string) bool { return m.Model == "" || m.Model == model }

// PlatformTarget names a social platform, for a kind of deliveries.
type PlatformTarget struct {
	Platform string `json:"platform,omitempty"`
}

// Params declares the platform.
func (p *PlatformTarget) Params() []*Param {
	return []*Param{Field(&p.Platform, "Platform", "the social platform (`all`: every one).").Enum(anys(Platforms)...)}
}

// ErrorCode is the code of an error a kind makes (a job's failure, a
// forced answer's error object).
type ErrorCode struct {
	Code string `json:"code,omitempty"`
}

// Params declares the code.
func (e *ErrorCode) Params() []*Param {
	return []*Param{Field(&e.Code, "Code", "the error code.").
		Pattern(`^[a-z][a-z0-9_]{0,63}$`, "must be lower case letters, digits and underscores, starting with a letter, at most 64 characters")}
}
