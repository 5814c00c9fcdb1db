package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

func newSandbox(t testing.TB, e *Engine, spec SandboxSpec) Sandbox {
	t.Helper()
	sb, err := e.CreateSandbox(spec, 0)
	require.NoError(t, err)
	return sb
}

// sandboxKey is the principal of a sandbox's first key.
func sandboxKey(t testing.TB, e *Engine, sb Sandbox) Principal {
	t.Helper()
	return principal(t, e, sb.Tokens[0].Token)
}

func generate(t testing.TB, e *Engine, p Principal, prompt string) uint64 {
	t.Helper()
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: prompt})
	require.NoError(t, err)
	return g.Assets[0].ID
}

// records dumps every record of the state but those of workspace skip (0:
// none) and the clock, as bucket -> key -> value.
func records(t testing.TB, e *Engine, skip uint64) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	require.NoError(t, e.db.View(func(btx *bolt.Tx) error {
		tx := e.newTx(btx)
		for _, name := range allBuckets {
			m := map[string]string{}
			err := btx.Bucket(name).ForEach(func(k, v []byte) error {
				if skip != 0 && ownedBy(tx, name, k, v) == skip {
					return nil
				}
				if string(name) == string(bMeta) && (string(k) == "clock" || string(k) == string(keySandboxCount)) {
					return nil
				}
				m[fmt.Sprintf("%x", k)] = string(v)
				return nil
			})
			if err != nil {
				return err
			}
			out[string(name)] = m
		}
		return nil
	}))
	return out
}

// ownedBy is the workspace a record belongs to; 0 when none.
func ownedBy(t *tx, bucket, k, v []byte) uint64 {
	switch string(bucket) {
	case string(bMeta):
		return 0
	case string(bWorkspaces), string(bRate), string(bFaults):
		if len(k) == 8 {
			return getU64(k)
		}
		return 0
	case string(bTokens):
		var tok Token
		_ = json.Unmarshal(v, &tok)
		return tok.WorkspaceID
	case string(bJobs):
		var j Job
		_ = json.Unmarshal(v, &j)
		return j.WorkspaceID
	case string(bDue):
		var ev Event
		_ = json.Unmarshal(v, &ev)
		return t.eventWorkspace(ev)
	case string(bOwners):
		return getU64(v)
	case string(bFiles):
		return getU64(k[1:9])
	case string(bSandboxes):
		var s Sandbox
		_ = json.Unmarshal(v, &s)
		return s.WorkspaceID
	}
	return getU64(k[:8]) // the buckets whose keys start with the workspace
}

// busy makes a workspace hold one of everything: a generation that
// completes, one that fails, one that is stuck, one still queued, an
// upload, an Encore creation, a scheduled publication, a fault and a rate
// window.
func busy(t testing.TB, e *Engine, p Principal) {
	t.Helper()
	generate(t, e, p, "done")
	generate(t, e, p, "broken [mock:fail]")
	generate(t, e, p, "forever [mock:stuck]")
	up := upload(t, e, p, 640, 640, "a photo")
	advance(t, e, time.Hour)
	generate(t, e, p, "still queued")
	effects := e.EncoreEffects()
	_, err := e.CreateEncore(context.Background(), p, EncoreRequest{Effect: effects[0].Slug, AssetID: &up.ID})
	require.NoError(t, err)
	accounts, err := e.SocialAccounts(p)
	require.NoError(t, err)
	if len(accounts) > 0 {
		at := e.Clock().Now().Add(48 * time.Hour)
		_, err = e.CreatePublication(p, PublicationRequest{AssetIDs: []uint64{up.ID}, Caption: "later", SocialAccountIDs: []uint64{accounts[0].ID}, ScheduledAt: &at})
		require.NoError(t, err)
	}
	e.Allow(p.WorkspaceID)
	require.NoError(t, e.FlushRates())
}

func TestSandboxStartsAsItsFixtureWorkspace(t *testing.T) {
	e := newEngine(t, engineOpts{})
	acme := principal(t, e, tokAcme)
	sb := newSandbox(t, e, SandboxSpec{})
	assert.Regexp(t, `^sbx_1_[0-9a-f]{8}$`, sb.ID)
	assert.Equal(t, "Acme Studio", sb.From)
	assert.Equal(t, "Sandbox 1", sb.Name)
	require.Len(t, sb.Tokens, 5, "Acme's four API keys and its OAuth token")
	assert.Equal(t, "all scopes", sb.Tokens[0].Name)
	assert.Equal(t, "oauth", sb.Tokens[4].Type)
	p := sandboxKey(t, e, sb)
	assert.Equal(t, sb.WorkspaceID, p.WorkspaceID)
	assert.NotEqual(t, acme.WorkspaceID, p.WorkspaceID)
	assert.Equal(t, []string{ScopeRead, ScopeGenerate, ScopePublish}, p.Scopes)

	want, err := e.Account(acme)
	require.NoError(t, err)
	got, err := e.Account(p)
	require.NoError(t, err)
	assert.Equal(t, want.Balance, got.Balance)
	assert.Equal(t, want.Plan, got.Plan)
	assert.Equal(t, len(want.Gifts), len(got.Gifts))
	for _, read := range []func(Principal) (int, error){
		func(p Principal) (int, error) { l, err := e.SocialAccounts(p); return len(l), err },
		func(p Principal) (int, error) { l, err := e.Characters(p); return len(l), err },
		func(p Principal) (int, error) {
			pg, err := e.ListAssets(p, AssetQuery{Limit: 50})
			return len(pg.Data), err
		},
	} {
		n, err := read(acme)
		require.NoError(t, err)
		m, err := read(p)
		require.NoError(t, err)
		assert.Equal(t, n, m)
	}

	got2 := newSandbox(t, e, SandboxSpec{Name: "worker 2", From: "pixel garage", Credits: new(7), EmptyLibrary: true,
		Keys: []SandboxKey{{Name: "CI reader", Scopes: []string{ScopeRead}}}})
	assert.Equal(t, "Pixel Garage", got2.From)
	assert.Equal(t, "worker 2", got2.Name)
	p2 := sandboxKey(t, e, got2)
	assert.Equal(t, []string{ScopeRead}, p2.Scopes)
	assert.EqualValues(t, 7, balanceOf(t, e, got2.WorkspaceID))
	pg, err := e.ListAssets(p2, AssetQuery{Limit: 50})
	require.NoError(t, err)
	assert.Empty(t, pg.Data)
	assert.Len(t, e.Sandboxes(), 2)
	found, ok := e.SandboxOf(got2.WorkspaceID)
	assert.True(t, ok)
	assert.Equal(t, got2.ID, found.ID)
	found, ok = e.SandboxByControlToken(got2.ControlToken)
	assert.True(t, ok)
	assert.Equal(t, got2.ID, found.ID)
	_, ok = e.SandboxOf(acme.WorkspaceID)
	assert.False(t, ok, "a fixture workspace is no sandbox")
}

func TestSandboxSpecRules(t *testing.T) {
	e := newEngine(t, engineOpts{})
	for _, tc := range []struct {
		spec   SandboxSpec
		fields []string
	}{
		{SandboxSpec{From: "Nobody Inc"}, []string{"from"}},
		{SandboxSpec{Plan: "platinum", Credits: new(-1)}, []string{"plan", "credits"}},
		{SandboxSpec{RateLimitPerMinute: -5}, []string{"rate_limit_per_minute"}},
		{SandboxSpec{MonthlyGifts: &[]fixtures.Gift{{ModelID: "nope", PerMonth: 0}}}, []string{"monthly_gifts[0].model_id", "monthly_gifts[0].per_month"}},
		{SandboxSpec{MonthlyGifts: &[]fixtures.Gift{}}, nil},
		{SandboxSpec{Keys: []SandboxKey{{Name: "a", Scopes: []string{"admin"}}, {Name: "A", Scopes: []string{ScopeRead}}, {Scopes: nil, Type: "jwt"}}},
			[]string{"keys[0].scopes[0]", "keys[1].name", "keys[2].type", "keys[2].name", "keys[2].scopes"}},
	} {
		_, err := e.CreateSandbox(tc.spec, 0)
		if tc.fields == nil {
			assert.NoError(t, err)
			continue
		}
		requireViolations(t, err, tc.fields...)
	}
	assert.Len(t, e.Sandboxes(), 1, "a refused spec writes nothing")

	_, err := e.CreateSandbox(SandboxSpec{}, 2)
	require.NoError(t, err)
	_, err = e.CreateSandbox(SandboxSpec{}, 2)
	assert.Equal(t, "sandbox_limit_reached", AsError(err).Code)
	assert.Equal(t, ECONFLICT, AsError(err).Kind)
	require.NoError(t, e.DeleteSandbox(e.Sandboxes()[0].ID))
	_, err = e.CreateSandbox(SandboxSpec{}, 2)
	assert.NoError(t, err, "room again after a delete")
	assert.Equal(t, "not_found", AsError(e.DeleteSandbox("sbx_9_nope")).Code)
	_, err = e.ResetSandbox("sbx_9_nope")
	assert.Equal(t, "not_found", AsError(err).Code)
}

// A sandbox's faults fail its own jobs only; the global ones fail everyone's.
func TestSandboxFaultsStayInside(t *testing.T) {
	e := newEngine(t, engineOpts{})
	acme := principal(t, e, tokAcme)
	a, b := newSandbox(t, e, SandboxSpec{}), newSandbox(t, e, SandboxSpec{})
	pa, pb := sandboxKey(t, e, a), sandboxKey(t, e, b)
	require.NoError(t, addRule(e, a.WorkspaceID, fault.Spec{Kind: fault.JobFailure, First: 5}))
	rate := 1.0
	require.NoError(t, addRule(e, b.WorkspaceID, fault.Spec{Kind: fault.FailureRate, Rate: &rate}))
	require.NoError(t, addRule(e, a.WorkspaceID, fault.Spec{Kind: fault.PlatformFailure, Platform: "instagram"}))
	ids := map[string]uint64{"a": generate(t, e, pa, "a"), "b": generate(t, e, pb, "b"), "acme": generate(t, e, acme, "acme")}
	advance(t, e, time.Hour)
	status := func(p Principal, id uint64) string { return assetOf(t, e, p, id).Status }
	assert.Equal(t, StatusFailed, status(pa, ids["a"]))
	assert.Equal(t, StatusFailed, status(pb, ids["b"]))
	assert.Equal(t, StatusCompleted, status(acme, ids["acme"]))
	rules := rulesOf(e).Rules(a.WorkspaceID)
	require.Len(t, rules, 2)
	assert.EqualValues(t, 1, rules[0].Hits, "one of the five jobs failed")
	assert.Empty(t, rulesOf(e).Rules(GlobalFaults), "nothing global was set")

	require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.JobFailure, First: 1, Model: "imagen-4"}))
	id := generate(t, e, pb, "global")
	advance(t, e, time.Hour)
	assert.Equal(t, StatusFailed, status(pb, id), "global faults apply to sandboxes too")
	assert.Empty(t, rulesOf(e).Rules(GlobalFaults), "spent")
}

// Deleting a sandbox leaves the state as it was before it: every record it
// made goes, whatever it was doing.
func TestDeleteSandboxLeavesNoTrace(t *testing.T) {
	e := newEngine(t, engineOpts{})
	before := records(t, e, 0)
	sb := newSandbox(t, e, SandboxSpec{})
	p := sandboxKey(t, e, sb)
	busy(t, e, p)
	require.NoError(t, e.DeleteSandbox(sb.ID))
	after := records(t, e, 0)
	assert.Equal(t, before, after)
	for _, tok := range sb.Tokens {
		_, ok := e.Authenticate(tok.Token)
		assert.False(t, ok, "a deleted sandbox's key is unknown")
	}
	_, err := e.Sandbox(sb.ID)
	assert.Equal(t, "not_found", AsError(err).Code)
	_, ok := e.SandboxByControlToken(sb.ControlToken)
	assert.False(t, ok)
	assert.Equal(t, "not_found", AsError(e.DeleteSandbox(sb.ID)).Code, "deleted once")
}

// Resetting a sandbox puts it back to its start and leaves every other
// record of the state byte for byte as it was.
func TestResetSandbox(t *testing.T) {
	e := newEngine(t, engineOpts{})
	a, b := newSandbox(t, e, SandboxSpec{}), newSandbox(t, e, SandboxSpec{})
	pa := sandboxKey(t, e, a)
	busy(t, e, pa)
	busy(t, e, sandboxKey(t, e, b))
	busy(t, e, principal(t, e, tokAcme))
	others := records(t, e, a.WorkspaceID)

	_, err := e.ResetSandbox(a.ID)
	require.NoError(t, err)
	assert.Equal(t, others, records(t, e, a.WorkspaceID), "the others are untouched")

	p := sandboxKey(t, e, a)
	assert.Equal(t, pa, p, "the same workspace and keys")
	assert.EqualValues(t, 5000, balanceOf(t, e, a.WorkspaceID))
	ledger := checkLedger(t, e, a.WorkspaceID)
	require.Len(t, ledger, 1)
	assert.Equal(t, LedgerGrant, ledger[0].Type)
	pubs, err := e.Publications(p, "", 0, 50)
	require.NoError(t, err)
	assert.Empty(t, pubs.Data)
	acmeAssets, err := e.ListAssets(principal(t, e, tokAcme), AssetQuery{Kind: "image", Limit: 50})
	require.NoError(t, err)
	got, err := e.ListAssets(p, AssetQuery{Kind: "image", Limit: 50})
	require.NoError(t, err)
	assert.Equal(t, len(acmeAssets.Data)-5, len(got.Data), "the starting library: Acme made 4 images and an upload since")
	assert.Equal(t, e.RateWindow(a.WorkspaceID).Limit, e.RateWindow(a.WorkspaceID).Remaining, "a fresh rate window")
}

// A sandbox finishes its own work now, without moving the shared clock.
func TestRunSandboxFinishesItsOwnWork(t *testing.T) {
	e := newEngine(t, engineOpts{})
	acme := principal(t, e, tokAcme)
	sb := newSandbox(t, e, SandboxSpec{})
	p := sandboxKey(t, e, sb)
	mine := []uint64{generate(t, e, p, "one"), generate(t, e, p, "two"), generate(t, e, p, "forever [mock:stuck]")}
	theirs := generate(t, e, acme, "not yours")
	now := e.Clock().Now()
	n, err := e.RunSandbox(sb.ID, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 5, n, "two jobs of two events each, and the stuck one starts")
	assert.Equal(t, now, e.Clock().Now(), "the clock did not move")
	assert.Equal(t, StatusCompleted, assetOf(t, e, p, mine[0]).Status)
	assert.Equal(t, StatusCompleted, assetOf(t, e, p, mine[1]).Status)
	assert.Equal(t, StatusProcessing, assetOf(t, e, p, mine[2]).Status, "a stuck job never finishes")
	assert.Equal(t, StatusQueued, assetOf(t, e, acme, theirs).Status, "another workspace's job waits for the clock")

	video, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "slow", Duration: new(8)})
	require.NoError(t, err)
	n, err = e.RunSandbox(sb.ID, time.Second)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is due within a second")
	assert.Equal(t, StatusQueued, assetOf(t, e, p, video.Assets[0].ID).Status)
	_, err = e.RunSandbox(sb.ID, -time.Second)
	requireViolations(t, err, "limit")
}

// Creating a sandbox costs the same beside one or a thousand.
func BenchmarkSandboxCreateDelete(b *testing.B) {
	for _, existing := range []int{1, 1000} {
		b.Run(fmt.Sprintf("beside %d", existing), func(b *testing.B) {
			e := newEngine(b, engineOpts{})
			for range existing {
				_, err := e.CreateSandbox(SandboxSpec{EmptyLibrary: true}, 1<<20)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				sb, err := e.CreateSandbox(SandboxSpec{}, 1<<20)
				if err != nil {
					b.Fatal(err)
				}
				if err := e.DeleteSandbox(sb.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Subscribers hear of a sandbox created, reset or deleted.
func TestSandboxChangesAreHeard(t *testing.T) {
	e := newEngine(t, engineOpts{})
	changes, stop := e.Subscribe()
	defer stop()
	heard := func(what string) {
		t.Helper()
		for {
			select {
			case c := <-changes:
				if c.Kind == ChangeWorkspaces {
					return
				}
			default:
				t.Fatalf("%s: no workspaces change", what)
			}
		}
	}
	sb := newSandbox(t, e, SandboxSpec{})
	heard("create")
	_, err := e.ResetSandbox(sb.ID)
	require.NoError(t, err)
	heard("reset")
	require.NoError(t, e.DeleteSandbox(sb.ID))
	heard("delete")
}
