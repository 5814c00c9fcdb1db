package sim

import (
	"fmt"
	"math"
)

// record appends a ledger entry for the workspace, stamped with the clock
// and the workspace's balance after it.
func (t *tx) record(ws *Workspace, e LedgerEntry) error {
	b := t.b(bLedger)
	id, err := b.NextSequence()
	if err != nil {
		return err
	}
	e.ID, e.At, e.Balance = id, FormatTime(t.now), ws.Balance
	t.ledgerRecorded(ws.ID, e)
	t.meterCredits(e)
	k := wsKey(ws.ID, id)
	return putJSON(b, k[:], e)
}

// Ledger returns every credit movement of the workspace, oldest first.
func (e *Engine) Ledger(workspaceID uint64) ([]LedgerEntry, error) {
	var out []LedgerEntry
	err := e.view(func(t *tx) error {
		c := t.b(bLedger).Cursor()
		prefix := u64(workspaceID)
		for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
			var le LedgerEntry
			if err := jsonUnmarshal(v, &le); err != nil {
				return err
			}
			out = append(out, le)
		}
		return nil
	})
	return out, err
}

// Balance is a workspace's credit balance.
func (e *Engine) Balance(workspaceID uint64) (int64, error) {
	var bal int64
	err := e.view(func(t *tx) error {
		ws, err := t.workspace(workspaceID)
		if err != nil {
			return err
		}
		bal = ws.Balance
		return nil
	})
	return bal, err
}

// CheckLedger verifies that the ledger explains the balance:
// balance = grants - charges + refunds, and each entry's balance_after
// follows from the one before.
func CheckLedger(entries []LedgerEntry, balance int64) error {
	var running int64
	for _, le := range entries {
		switch le.Type {
		case LedgerGrant, LedgerRefund:
			running += le.Amount
		case LedgerCharge:
			running -= le.Amount
		case LedgerGift:
			if le.Amount != 0 {
				return fmt.Errorf("ledger entry %d: a gift moves no credits, got %d", le.ID, le.Amount)
			}
		default:
			return fmt.Errorf("ledger entry %d: unknown type %q", le.ID, le.Type)
		}
		if running != le.Balance {
			return fmt.Errorf("ledger entry %d (%s %d): balance after is %d, the entries before explain %d", le.ID, le.Type, le.Amount, le.Balance, running)
		}
	}
	if running != balance {
		return fmt.Errorf("the ledger explains a balance of %d, the workspace has %d", running, balance)
	}
	return nil
}

// GrantCredits adds (or, when negative, removes) credits, with a ledger entry.
func (e *Engine) GrantCredits(workspaceID uint64, amount int64, note string) (int64, error) {
	var bal int64
	err := e.update(func(t *tx) error {
		ws, err := t.workspace(workspaceID)
		if err != nil {
			return err
		}
		switch {
		case amount > 0 && ws.Balance > math.MaxInt64/2-amount:
			return &Error{Kind: EINVALID, Code: "invalid_amount", Message: fmt.Sprintf("The balance is %d; it cannot grow by %d.", ws.Balance, amount)}
		case ws.Balance+amount < 0:
			return &Error{Kind: EINVALID, Code: "invalid_amount", Message: fmt.Sprintf("The balance is %d; it cannot go below 0.", ws.Balance)}
		}
		ws.Balance += amount
		if note == "" {
			note = "credits granted"
		}
		typ, amt := LedgerGrant, amount
		if amount < 0 {
			typ, amt = LedgerCharge, -amount
		}
		if err := t.record(ws, LedgerEntry{Type: typ, Amount: amt, Description: note}); err != nil {
			return err
		}
		bal = ws.Balance
		return t.putWorkspace(ws)
	})
	return bal, err
}
