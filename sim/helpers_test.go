package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/problem"
)

// Tokens of the default fixture.
const (
	tokAcme      = "mk_test_all_scopes" // Acme Studio: pro plan, 5000 credits
	tokFree      = "mk_test_free_plan"  // Pixel Garage: free plan (no publishing), 150 credits
	tokBusiness  = "mk_test_business"   // Northwind Media: business plan, 100000 credits
	tokNoCredits = "mk_test_no_credits" // Empty Wallet Co: creator plan, 0 credits
)

// Records of the default fixture (seed 0) the rule tests use;
// TestFixtureRecordsOfTheRuleTests checks they still are what they say.
const (
	acmeImage      uint64 = 1  // completed generated image, 1024x1024
	acmeImage2     uint64 = 4  // completed generated image
	acmeUpload     uint64 = 3  // completed upload, 1600x1200
	acmeVideo      uint64 = 2  // completed video
	acmeVideo2     uint64 = 5  // completed video
	acmeMusic      uint64 = 7  // completed music
	acmeVoice      uint64 = 11 // completed voice-over
	pixelImage     uint64 = 18 // completed image of Pixel Garage
	acmeInstagram  uint64 = 1  // publishable, takes images
	acmeTikTok     uint64 = 2  // publishable, videos only
	acmeX          uint64 = 5  // not publishable
	pixelInstagram uint64 = 6  // Pixel Garage's account
	acmeMaya       uint64 = 1  // ready character
	acmeDraftDan   uint64 = 4  // character still training
	pixelCharacter uint64 = 5  // Pixel Garage's ready character
	unknownID      uint64 = 999_999
)

func TestFixtureRecordsOfTheRuleTests(t *testing.T) {
	e := newEngine(t, engineOpts{})
	assets := []struct {
		token string
		id    uint64
		kind  string
	}{
		{tokAcme, acmeImage, KindImage}, {tokAcme, acmeImage2, KindImage}, {tokAcme, acmeUpload, KindImage},
		{tokAcme, acmeVideo, KindVideo}, {tokAcme, acmeVideo2, KindVideo}, {tokAcme, acmeMusic, KindMusic},
		{tokAcme, acmeVoice, KindVoice}, {tokFree, pixelImage, KindImage},
	}
	for _, a := range assets {
		got := assetOf(t, e, principal(t, e, a.token), a.id)
		assert.Equal(t, a.kind, got.Kind, "asset %d", a.id)
		assert.Equal(t, StatusCompleted, got.Status, "asset %d", a.id)
	}
	accounts := map[uint64]string{}
	for _, tok := range []string{tokAcme, tokFree} {
		list, err := e.SocialAccounts(principal(t, e, tok))
		require.NoError(t, err)
		for _, s := range list {
			accounts[s.ID] = s.Platform
		}
	}
	assert.Equal(t, map[uint64]string{acmeInstagram: "instagram", acmeTikTok: "tiktok", 3: "youtube", 4: "linkedin", acmeX: "x", pixelInstagram: "instagram"}, accounts)
	chars, err := e.Characters(principal(t, e, tokAcme))
	require.NoError(t, err)
	assert.Contains(t, charIDs(chars), acmeMaya)
	assert.NotContains(t, charIDs(chars), acmeDraftDan, "training characters are not listed")
	chars, err = e.Characters(principal(t, e, tokFree))
	require.NoError(t, err)
	assert.Equal(t, []uint64{pixelCharacter}, charIDs(chars))
}

func charIDs(cs []Character) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// assetOf reads an asset of the principal's workspace.
func assetOf(t testing.TB, e *Engine, p Principal, id uint64) Asset {
	t.Helper()
	g, err := e.Generation(context.Background(), p, id, 0)
	require.NoError(t, err)
	for _, a := range g.Assets {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("asset %d is not in its own generation", id)
	return Asset{}
}

// requireViolations asserts that err is a validation_failed error (kind
// EINVALID) whose violations name exactly fields, in order, and returns them.
func requireViolations(t testing.TB, err error, fields ...string) []Violation {
	t.Helper()
	require.Error(t, err)
	be := AsError(err)
	require.Equal(t, EINVALID, be.Kind, "%v", err)
	require.Equal(t, "validation_failed", be.Code, "%v", err)
	vs, ok := be.Details["violations"].([]Violation)
	require.True(t, ok, "details.violations: %#v", be.Details)
	got := make([]string, len(vs))
	for i, v := range vs {
		got[i] = v.Field
		assert.Equal(t, "body", v.In, "violation of %s", v.Field)
		assert.NotEmpty(t, v.Reason, "violation of %s", v.Field)
	}
	require.Equal(t, fields, got, "%v", err)
	return vs
}

// pngBytes is a w x h PNG.
func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))))
	return buf.Bytes()
}

// pngDataURI is a w x h PNG as a data URI.
func pngDataURI(t testing.TB, w, h int) string {
	t.Helper()
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, w, h))
}

// gifDataURI is a large GIF (a type the service does not take) as a data URI.
func gifDataURI(t testing.TB) string {
	t.Helper()
	var buf bytes.Buffer
	img := image.NewPaletted(image.Rect(0, 0, 800, 800), color.Palette{color.Black, color.White})
	require.NoError(t, gif.Encode(&buf, img, nil))
	return "data:image/gif;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

// upload imports a w x h PNG into the principal's library.
func upload(t testing.TB, e *Engine, p Principal, w, h int, title string) Asset {
	t.Helper()
	a, err := e.Upload(context.Background(), p, UploadInput{Data: pngBytes(t, w, h), Title: title})
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, a.Status)
	return a
}

// stuckImage is an image generation that never completes.
func stuckImage(t testing.TB, e *Engine, p Principal) uint64 {
	t.Helper()
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "pending [mock:stuck]"})
	require.NoError(t, err)
	return g.Assets[0].ID
}

// failedImage is an image generation that failed (queued, then failed at
// once by the control action).
func failedImage(t testing.TB, e *Engine, p Principal) uint64 {
	t.Helper()
	id := stuckImage(t, e, p)
	g, err := e.ControlAsset(id, JobFail, "")
	require.NoError(t, err)
	require.Equal(t, StatusFailed, g.Status)
	return id
}

// advance moves the simulated clock forward by d.
func advance(t testing.TB, e *Engine, d time.Duration) {
	t.Helper()
	_, err := e.Advance(d)
	require.NoError(t, err)
}

func balanceOf(t testing.TB, e *Engine, ws uint64) int64 {
	t.Helper()
	bal, err := e.Balance(ws)
	require.NoError(t, err)
	return bal
}

// checkLedger asserts that the workspace's ledger explains its balance and
// returns the ledger.
func checkLedger(t testing.TB, e *Engine, ws uint64) []LedgerEntry {
	t.Helper()
	ledger, err := e.Ledger(ws)
	require.NoError(t, err)
	require.NoError(t, CheckLedger(ledger, balanceOf(t, e, ws)))
	return ledger
}

// ledgerOf returns the entries of one type about one Encore creation.
func ledgerOf(ledger []LedgerEntry, typ string, encoreID uint64) []LedgerEntry {
	var out []LedgerEntry
	for _, le := range ledger {
		if le.Type == typ && le.EncoreID == encoreID {
			out = append(out, le)
		}
	}
	return out
}

// within returns what ch delivers, waiting at most a minute of wall-clock
// time: a bound that only a bug reaches, never a timing a test relies on.
// Past it the test fails, saying what did not happen.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: still waiting after a minute", what)
		panic("unreachable")
	}
}

// rulesOf is the fault store a test engine asks (newEngine gives each one
// its own, as a server does).
func rulesOf(e *Engine) *fault.Set { return e.fates.(*fault.Set) }

// addRule keeps a fault rule in scope ws of the engine's store, checked as
// the control API checks it.
func addRule(e *Engine, ws uint64, spec fault.Spec) error {
	if err := fault.Validate(&spec, "body", testService); err != nil {
		return err
	}
	_, err := rulesOf(e).Add(ws, spec)
	return err
}

// testService is a service of every operation, for the rules the
// simulation's kinds make (they target no operation's answers).
var testService fault.Service = anyService{}

type anyService struct{}

func (anyService) Has(string) bool                                     { return true }
func (anyService) DeclaredStatuses(string) []int                       { return nil }
func (anyService) ErrorStatuses() []int                                { return nil }
func (anyService) Success(string) int                                  { return 200 }
func (anyService) ErrorCodes(string, int) []string                     { return nil }
func (anyService) Examples(string, int) []string                       { return nil }
func (anyService) CheckAnswer(string, int, []byte) []problem.Violation { return nil }
