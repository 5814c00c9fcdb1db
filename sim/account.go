package sim

import "time"

// Account is the calling workspace as GET /account shows it.
type Account struct {
	WorkspaceID       uint64
	WorkspaceName     string
	Plan              string
	Balance           int64
	RateLimit         int
	PublishingAllowed bool
	Scopes            []string
	TokenType         string
	Gifts             []GiftView
}

// GiftView is a monthly gift as of the clock's month.
type GiftView struct {
	ModelID   string
	PerMonth  int
	Remaining int
	RenewsAt  time.Time
}

// Account reads the principal's workspace.
func (e *Engine) Account(p Principal) (Account, error) {
	var out Account
	err := e.view(func(t *tx) error {
		ws, err := t.workspace(p.WorkspaceID)
		if err != nil {
			return err
		}
		out = Account{WorkspaceID: ws.ID, WorkspaceName: ws.Name, Plan: ws.Plan, Balance: ws.Balance, RateLimit: ws.RateLimit,
			PublishingAllowed: ws.PublishingAllowed, Scopes: p.Scopes, TokenType: p.TokenType}
		month := t.now.Format("2006-01")
		y, m, _ := t.now.Date()
		renews := time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
		for _, g := range ws.Gifts {
			used := g.Used
			if g.Month != month {
				used = 0
			}
			out.Gifts = append(out.Gifts, GiftView{ModelID: g.ModelID, PerMonth: g.PerMonth, Remaining: max(0, g.PerMonth-used), RenewsAt: renews})
		}
		return nil
	})
	return out, err
}
