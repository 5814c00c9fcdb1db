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
		out.Gifts = giftViews(ws, t.now)
		return nil
	})
	return out, err
}
