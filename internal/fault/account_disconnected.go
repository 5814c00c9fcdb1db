package fault

// AccountDisconnected fails a social account's deliveries: the account is
// to reconnect.
const AccountDisconnected = "account_disconnected"

func init() { Register(AccountDisconnected, new(accountDisconnected)) }

type accountDisconnected struct {
	PlatformTarget
	SocialAccountID uint64 `json:"social_account_id,omitempty"`
}

func (k *accountDisconnected) Params() []*Param {
	return []*Param{
		Note(&k.Platform, "the platform whose accounts are disconnected."),
		Field(&k.SocialAccountID, "Social account id", "the social account whose deliveries fail (with `platform` too: that account, on that platform).").Min(1).Format("int64"),
	}
}

func (*accountDisconnected) About() About {
	return About{Stage: Publish, Targets: []string{TargetProbability, TargetFirst},
		Doc: "a publication's delivery to the social account `social_account_id`, or to the accounts of `platform` (both: that account, on that platform), " +
			"fails with `account_disconnected` while the other deliveries publish; the account then reads `publishable: false` " +
			"(reconnect it in the app: a reset) and later publications to it answer 400.",
		Meets: "a delivery to one social account fails with `account_disconnected` while the others publish; the account then reads `publishable: false`"}
}

// Check needs an account or a platform, and one platform.
func (k *accountDisconnected) Check(c *Checks) {
	if k.SocialAccountID == 0 && k.Platform == "" {
		c.Bad(&k.SocialAccountID, "give social_account_id or platform (or both: the account of that id on that platform)")
	}
	if k.Platform == "all" {
		c.Bad(&k.Platform, "names one platform")
	}
}

// Disconnects is its account, or the accounts of its platform (both: that
// account on that platform).
func (k *accountDisconnected) Disconnects(account uint64, platform string) bool {
	return (k.SocialAccountID == 0 || k.SocialAccountID == account) && (k.Platform == "" || k.Platform == platform)
}
