package report

import "github.com/mediamock/mediamock/controlapi"

// The answers outside the contract: a status fault that rehearses drift
// (drift: true) forces a status, code or body openapi.json does not allow,
// and marks the exchange's journal entry (OutsideContract, which the edge
// fills from the operation's answer). OutsideContract is the hook the
// report reads: the rule below names those answers, so that a client
// that met them is not mistaken for one the contract would have let pass.

// outsideContract is the finding of answers forced outside the contract.
var outsideContract = Rule{"outside-contract", Info, "Answers outside the contract (rehearsed drift)",
	"A status fault with `drift: true` answered a status, error code or body openapi.json does not allow (the journal's `outside_contract` says which): the client met the service's possible drift on purpose.",
	"Nothing, if the client was meant to rehearse drift: check that it survived each of these answers (the request ids); a client of the contract alone need not handle them."}

// outside counts an entry whose answer a drift rule forced outside the
// contract; the finding's detail is the first one's reason.
func (g *grader) outside(e *controlapi.JournalEntry) {
	if e.OutsideContract == "" {
		return
	}
	f := g.found[outsideContract.ID]
	f.add(e.ID)
	if f.detail == "" {
		f.detail = e.OutsideContract + "."
	}
}
