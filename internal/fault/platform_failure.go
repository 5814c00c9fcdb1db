package fault

// PlatformFailure fails the deliveries to a social platform.
const PlatformFailure = "platform_failure"

// ViaPlatforms names the shorthand PUT /faults/platforms/{platform}: a
// rule of the kind per platform.
const ViaPlatforms = "platforms"

func init() { Register(PlatformFailure, new(platformFailure)) }

type platformFailure struct {
	PlatformTarget
}

func (k *platformFailure) Params() []*Param {
	return []*Param{Note(&k.Platform, "the platform whose deliveries fail; `all`: every platform.").Required()}
}

func (*platformFailure) About() About {
	return About{Stage: Publish,
		Doc:   "every delivery of a publication to `platform` (`all`: every platform) fails with `platform_error` while the rule stands. `PUT /faults/platforms/{platform}` makes it.",
		Meets: "every delivery to the platform (`all`: every one) fails with `platform_error`",
		Shorthands: []Shorthand{{Via: ViaPlatforms, Endpoint: "PUT /faults/platforms/{platform}",
			Doc: "a `" + PlatformFailure + "` rule per platform (`fail_platforms`)"}}}
}

// FailsPlatform is its platform, or every one.
func (k *platformFailure) FailsPlatform(platform string) bool {
	return k.Platform == platform || k.Platform == "all"
}
