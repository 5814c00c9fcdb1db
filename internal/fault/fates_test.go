package fault_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// What media-API clients meet in production, rehearsed on the virtual
// clock through the public Go API: moderation at creation and while
// processing, a generation that loses some of its outputs, and a social
// account that must be reconnected. Each is asked for twice, by a fault
// rule and by a magic marker, with exact credits and a ledger that
// explains the balance.
func TestProductionSurprises(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	const perOutput = 6 // imagen-4's credits_per_output in the embedded fixtures
	sandbox := func(t *testing.T) *mediamock.Sandbox {
		sb := srv.Sandbox(t, func(s *mediamock.SandboxSpec) {
			s.Credits = new(1000)
			s.MonthlyGifts = &[]mediamock.Gift{}
		})
		zero := 0.0
		require.NoError(t, sb.SetFailureRate(&zero), "no job fails by the model's own rate")
		return sb
	}
	generate := func(t *testing.T, sb *mediamock.Sandbox, prompt string, count int) (int, map[string]any) {
		t.Helper()
		return callAs(t, srv, sb.APIKey, "POST", "/generations",
			fmt.Sprintf(`{"modality":"image","model_id":"imagen-4","prompt":%q,"count":%d}`, prompt, count))
	}
	read := func(t *testing.T, sb *mediamock.Sandbox, created map[string]any) map[string]any {
		t.Helper()
		_, err := sb.RunUntilIdle(time.Hour)
		require.NoError(t, err)
		id := created["assets"].([]any)[0].(map[string]any)["id"].(float64)
		status, g := callAs(t, srv, sb.APIKey, "GET", fmt.Sprintf("/generations/%d", int64(id)), "")
		require.Equal(t, http.StatusOK, status, g)
		return g
	}
	balanced := func(t *testing.T, sb *mediamock.Sandbox, balance int64, entries int) []mediamock.LedgerEntry {
		t.Helper()
		got, err := sb.Balance()
		require.NoError(t, err)
		assert.Equal(t, balance, got)
		ledger, err := sb.Ledger()
		require.NoError(t, err)
		assert.Len(t, ledger, entries)
		var running int64
		for _, e := range ledger {
			switch e.Type {
			case "grant", "refund":
				running += e.Amount
			case "charge":
				running -= e.Amount
			}
			assert.Equal(t, running, e.Balance, "entry %d", e.ID)
		}
		assert.Equal(t, balance, running, "the ledger explains the balance")
		return ledger
	}

	refused := map[string]func(*mediamock.Sandbox) string{
		"rule": func(sb *mediamock.Sandbox) string {
			_, err := sb.AddFault(mediamock.FaultSpec{Kind: "moderation", First: 1})
			require.NoError(t, err)
			return "a fox"
		},
		"marker": func(*mediamock.Sandbox) string { return "a fox [mock:moderation]" },
	}
	for name, ask := range refused {
		t.Run("moderation refuses at creation, by "+name, func(t *testing.T) {
			sb := sandbox(t)
			status, body := generate(t, sb, ask(sb), 2)
			require.Equal(t, http.StatusUnprocessableEntity, status, body)
			assert.Equal(t, "content_moderated", body["error"].(map[string]any)["code"])
			balanced(t, sb, 1000, 1) // the grant alone: nothing charged
			_, list := callAs(t, srv, sb.APIKey, "GET", "/assets?limit=50", "")
			for _, a := range list["data"].([]any) {
				assert.NotEqual(t, "a fox", a.(map[string]any)["prompt"], "nothing created")
			}
		})
	}

	later := map[string]func(*mediamock.Sandbox) string{
		"rule": func(sb *mediamock.Sandbox) string {
			_, err := sb.AddFault(mediamock.FaultSpec{Kind: "moderation", At: "processing", Modality: "image", First: 1})
			require.NoError(t, err)
			return "a fox"
		},
		"marker": func(*mediamock.Sandbox) string { return "a fox [mock:moderation=processing]" },
	}
	for name, ask := range later {
		t.Run("moderation fails the job and refunds it, by "+name, func(t *testing.T) {
			sb := sandbox(t)
			status, created := generate(t, sb, ask(sb), 2)
			require.Equal(t, http.StatusCreated, status, created)
			assert.EqualValues(t, 2*perOutput, created["credits_charged"])
			assert.EqualValues(t, 1000-2*perOutput, created["credits_balance"])
			g := read(t, sb, created)
			assert.Equal(t, "failed", g["status"])
			for _, a := range g["assets"].([]any) {
				a := a.(map[string]any)
				assert.Equal(t, "failed", a["status"])
				assert.Equal(t, "content_moderated", a["error"].(map[string]any)["code"])
				assert.EqualValues(t, 0, a["credits"])
			}
			ledger := balanced(t, sb, 1000, 3) // grant, charge, refund
			assert.Equal(t, "refund", ledger[2].Type)
			assert.EqualValues(t, 2*perOutput, ledger[2].Amount)
		})
	}

	partial := map[string]func(*mediamock.Sandbox) string{
		"rule": func(sb *mediamock.Sandbox) string {
			_, err := sb.AddFault(mediamock.FaultSpec{Kind: "output_failure", Outputs: 3, Model: "imagen-4"})
			require.NoError(t, err)
			return "four foxes"
		},
		"marker": func(*mediamock.Sandbox) string { return "four foxes [mock:fail-outputs=3]" },
	}
	for name, ask := range partial {
		t.Run("some outputs fail, each refunded, by "+name, func(t *testing.T) {
			sb := sandbox(t)
			status, created := generate(t, sb, ask(sb), 4)
			require.Equal(t, http.StatusCreated, status, created)
			assert.EqualValues(t, 4*perOutput, created["credits_charged"])
			g := read(t, sb, created)
			assert.Equal(t, "completed", g["status"], "D-42: at least one output completed")
			statuses := map[string]int{}
			var failedIDs []uint64
			for _, a := range g["assets"].([]any) {
				a := a.(map[string]any)
				statuses[a["status"].(string)]++
				if a["status"] == "failed" {
					assert.Equal(t, "output_failed", a["error"].(map[string]any)["code"])
					assert.EqualValues(t, 0, a["credits"])
					assert.Nil(t, a["url"])
					failedIDs = append(failedIDs, uint64(a["id"].(float64)))
				} else {
					assert.EqualValues(t, perOutput, a["credits"])
					assert.NotEmpty(t, a["url"])
				}
			}
			assert.Equal(t, map[string]int{"completed": 1, "failed": 3}, statuses)
			ledger := balanced(t, sb, 1000-perOutput, 3)
			assert.Equal(t, "refund", ledger[2].Type)
			assert.EqualValues(t, 3*perOutput, ledger[2].Amount, "each failed output's credits_per_output")
			assert.ElementsMatch(t, failedIDs, ledger[2].AssetIDs)
			assert.Equal(t, 1, sb.Coverage().Lifecycle["generation_outputs_failed_refunded"])

			status, one := generate(t, sb, "one fox", 1)
			require.Equal(t, http.StatusCreated, status, one)
			assert.Equal(t, "completed", read(t, sb, one)["status"], "one output is never partial")
		})
	}

	disconnected := map[string]func(*mediamock.Sandbox, uint64) string{
		"rule": func(sb *mediamock.Sandbox, id uint64) string {
			_, err := sb.AddFault(mediamock.FaultSpec{Kind: "account_disconnected", SocialAccountID: id})
			require.NoError(t, err)
			return "New menu"
		},
		"marker": func(_ *mediamock.Sandbox, id uint64) string {
			return fmt.Sprintf("New menu [mock:disconnected=%d]", id)
		},
	}
	for name, ask := range disconnected {
		t.Run("a disconnected account while the others publish, by "+name, func(t *testing.T) {
			sb := sandbox(t)
			_, accounts := callAs(t, srv, sb.APIKey, "GET", "/social/accounts", "")
			ids := map[string]uint64{}
			for _, a := range accounts["data"].([]any) {
				a := a.(map[string]any)
				ids[a["platform"].(string)] = uint64(a["id"].(float64))
			}
			status, created := generate(t, sb, "a latte", 1)
			require.Equal(t, http.StatusCreated, status, created)
			asset := read(t, sb, created)["assets"].([]any)[0].(map[string]any)["id"]

			caption := ask(sb, ids["instagram"])
			status, pub := callAs(t, srv, sb.APIKey, "POST", "/social/publications",
				fmt.Sprintf(`{"asset_ids":[%v],"caption":%q,"social_account_ids":[%d,%d]}`, asset, caption, ids["instagram"], ids["linkedin"]))
			require.Equal(t, http.StatusCreated, status, pub)
			_, err := sb.RunUntilIdle(time.Hour)
			require.NoError(t, err)
			_, pub = callAs(t, srv, sb.APIKey, "GET", fmt.Sprintf("/social/publications/%v", pub["id"]), "")
			assert.Equal(t, "partially_published", pub["status"])
			for _, d := range pub["deliveries"].([]any) {
				d := d.(map[string]any)
				if d["platform"] == "instagram" {
					assert.Equal(t, "failed", d["status"])
					assert.Equal(t, "account_disconnected", d["error"].(map[string]any)["code"])
					assert.Nil(t, d["post_url"])
				} else {
					assert.Equal(t, "published", d["status"])
					assert.NotEmpty(t, d["post_url"])
				}
			}
			_, accounts = callAs(t, srv, sb.APIKey, "GET", "/social/accounts", "")
			for _, a := range accounts["data"].([]any) {
				a := a.(map[string]any)
				if a["platform"] == "instagram" {
					assert.Equal(t, false, a["publishable"], "D-43: reconnect it in the app")
				}
			}
			status, again := callAs(t, srv, sb.APIKey, "POST", "/social/publications",
				fmt.Sprintf(`{"asset_ids":[%v],"caption":"again","social_account_ids":[%d]}`, asset, ids["instagram"]))
			assert.Equal(t, http.StatusBadRequest, status, again)
			assert.Equal(t, 1, sb.Coverage().Lifecycle["social_account_disconnected"])
			balanced(t, sb, 1000-perOutput, 2) // publishing is free

			require.NoError(t, sb.Reset())
			_, accounts = callAs(t, srv, sb.APIKey, "GET", "/social/accounts", "")
			for _, a := range accounts["data"].([]any) {
				if a := a.(map[string]any); a["platform"] == "instagram" {
					assert.Equal(t, true, a["publishable"], "a reset reconnects it")
				}
			}
		})
	}
}

// callAs makes an API request with a key.
func callAs(t testing.TB, srv *mediamock.Server, key, method, path, body string) (int, map[string]any) {
	t.Helper()
	status, out, _ := testkit.REST(t, srv, key, method, path, body)
	return status, out
}
