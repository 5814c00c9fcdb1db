package check

import "strings"

// The credits rules: a creation's balance is the one before it less its
// charge (credits.balance), and a gift's charge is 0 (credits.gift).

// observeBalance notes a balance the workspace had, if nothing could have
// spent while it was read.
func (k *Checker) observeBalance(g *group, balance int64, clean bool) {
	if !clean {
		g.balanceKnown = false
		return
	}
	g.balance, g.balanceKnown, g.balanceSpend, g.balanceUnk = balance, true, g.spend, k.unknownSpend
}

// checkCredits holds a creation's charge and balance to the balance known
// just before it. Only when certain: the balance was read with nothing that
// could spend in flight, nothing could spend between that read and this
// call's end, and a higher balance than expected is let pass while a job
// the checker saw running could have failed and been refunded.
func (k *Checker) checkCredits(c *verdict, p *Pending, g *group, m map[string]any, cleanEnd bool) {
	charged, ok1 := IntOf(m["credits_charged"])
	balance, ok2 := IntOf(m["credits_balance"])
	if !ok1 || !ok2 {
		return
	}
	if gift, _ := m["covered_by_monthly_gift"].(bool); gift {
		c.apply(RuleGift)
		if charged != 0 {
			c.add(RuleGift, "$.credits_charged", "covered_by_monthly_gift is true, so credits_charged must be 0, not %d", charged)
		}
	}
	if p.cleanStart && cleanEnd {
		c.apply(RuleBalance)
		want := g.balance - charged
		refundable := len(g.pending) > 0 || k.unknownPending()
		if balance < want || (balance > want && !refundable) {
			c.add(RuleBalance, "$.credits_balance", "the balance was %d and %d credits were charged, so credits_balance should be %d, not %d (no other call of the workspace could spend in between)",
				g.balance, charged, want, balance)
		}
	}
	k.observeBalance(g, balance, p.quietStart && cleanEnd)
}

// unknownPending reports whether a credential of an unknown workspace has a
// job running: it may be of any workspace, and refunded.
func (k *Checker) unknownPending() bool {
	for key, g := range k.groups {
		if strings.HasPrefix(key, "cred:") && len(g.pending) > 0 {
			return true
		}
	}
	return false
}
