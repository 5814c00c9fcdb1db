package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"
)

func TestParseMagicOfTheSurprises(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Magic
	}{
		{"a fox [mock:moderation]", Magic{Delay: -1, Moderation: ModeratedAtCreation}},
		{"a fox [mock:moderation=processing]", Magic{Delay: -1, Moderation: ModeratedWhileProcessing}},
		{"a fox [mock:moderation=later]", Magic{Delay: -1, Moderation: ModeratedAtCreation}},
		{"foxes [mock:fail-outputs=2]", Magic{Delay: -1, FailOutputs: 2}},
		{"foxes [mock:fail-outputs=0] [mock:fail-outputs=x]", Magic{Delay: -1}},
		{"menu [mock:disconnected=12] [mock:disconnected=TikTok]", Magic{Delay: -1, Disconnected: []string{"12", "tiktok"}}},
	} {
		assert.Equal(t, tc.want, ParseMagic(tc.text), tc.text)
	}
}

// Moderation at creation refuses before anything is taken: no credits, no
// monthly gift, no record. While processing, it fails and refunds.
func TestModeration(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	ctx := context.Background()
	before := balanceOf(t, e, p.WorkspaceID)
	entries := len(checkLedger(t, e, p.WorkspaceID))
	gifts := func() int {
		a, err := e.Account(p)
		require.NoError(t, err)
		for _, g := range a.Gifts {
			if g.ModelID == "flux-2-pro" {
				return g.Remaining
			}
		}
		return -1
	}
	left := gifts()
	require.Positive(t, left)

	_, err := e.CreateGeneration(ctx, p, GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "a fox [mock:moderation]", Count: new(2)})
	require.True(t, IsKind(err, EUNPROCESSABLE), "%v", err)
	assert.Equal(t, CodeContentModerated, AsError(err).Code)
	assert.Equal(t, left, gifts(), "the gift is not used")
	_, err = e.CreateGeneration(ctx, p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "[mock:moderation]", Count: new(5)})
	assert.True(t, IsKind(err, EINVALID), "the request's rules come first: %v", err)

	require.NoError(t, addRule(e, p.WorkspaceID, fault.Spec{Kind: fault.Moderation, Modality: "encore", First: 1}))
	_, err = e.CreateEncore(ctx, p, EncoreRequest{Effect: "golden-hour", ImageURL: "https://images.example.com/me.jpg"})
	require.True(t, IsKind(err, EUNPROCESSABLE), "%v", err)
	assert.Equal(t, before, balanceOf(t, e, p.WorkspaceID))
	assert.Len(t, checkLedger(t, e, p.WorkspaceID), entries, "the ledger does not move")

	c, err := e.CreateEncore(ctx, p, EncoreRequest{Effect: "golden-hour", ImageURL: "https://images.example.com/me.jpg?[mock:moderation=processing]"})
	require.NoError(t, err)
	assert.Equal(t, before-15, c.CreditsBalance)
	advance(t, e, time.Hour)
	v := assetOf(t, e, p, c.Video.ID)
	assert.Equal(t, StatusFailed, v.Status)
	assert.Equal(t, CodeContentModerated, v.Error.Code)
	assert.Len(t, ledgerOf(checkLedger(t, e, p.WorkspaceID), LedgerRefund, c.ID), 1)
	assert.Equal(t, before, balanceOf(t, e, p.WorkspaceID))
}

// Failed outputs are refunded at what each was charged: nothing under a
// monthly gift, and a generation of one output is never partial.
func TestFailedOutputs(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	ctx := context.Background()
	before := balanceOf(t, e, p.WorkspaceID)
	gifted, err := e.CreateGeneration(ctx, p, GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "foxes [mock:fail-outputs=9]", Count: new(3)})
	require.NoError(t, err)
	require.True(t, gifted.CoveredByGift)
	one, err := e.CreateGeneration(ctx, p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a fox [mock:fail-outputs=1]"})
	require.NoError(t, err)
	advance(t, e, time.Hour)

	g, err := e.Generation(ctx, p, gifted.Assets[0].ID, 0)
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, g.Status)
	failed := 0
	for _, a := range g.Assets {
		if a.Status == StatusFailed {
			failed++
			assert.Equal(t, CodeOutputFailed, a.Error.Code)
		}
		assert.Zero(t, a.Credits)
	}
	assert.Equal(t, 2, failed, "all but one at most")
	assert.Equal(t, StatusCompleted, assetOf(t, e, p, one.Assets[0].ID).Status)
	assert.Equal(t, before-6, balanceOf(t, e, p.WorkspaceID), "no refund of a gift; one imagen-4 output charged")
	for _, le := range checkLedger(t, e, p.WorkspaceID) {
		assert.NotEqual(t, LedgerRefund, le.Type, "nothing to refund")
	}
}

// A scheduled publication finds the account disconnected when it delivers;
// a platform's marker strikes each target of that platform.
func TestDisconnectedAccount(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	at := e.Clock().Now().Add(time.Hour)
	pub, err := e.CreatePublication(p, PublicationRequest{AssetIDs: []uint64{acmeVideo}, Caption: "soon [mock:disconnected=tiktok]",
		Platforms: []string{"tiktok", "youtube"}, ScheduledAt: &at})
	require.NoError(t, err)
	accounts := func() map[uint64]bool {
		out := map[uint64]bool{}
		require.NoError(t, e.view(func(t *tx) error {
			as, err := t.socialAccounts(p.WorkspaceID)
			for _, a := range as {
				out[a.ID] = a.Publishable
			}
			return err
		}))
		return out
	}
	assert.True(t, accounts()[acmeTikTok], "connected until the delivery")
	advance(t, e, 2*time.Hour)
	got, err := e.Publication(p, pub.ID)
	require.NoError(t, err)
	assert.Equal(t, PubPartiallyPublished, got.Status)
	assert.Equal(t, PubFailed, got.Deliveries[0].Status)
	assert.Equal(t, CodeAccountDisconnected, got.Deliveries[0].Error.Code)
	assert.Equal(t, PubPublished, got.Deliveries[1].Status)
	assert.False(t, accounts()[acmeTikTok])
	_, err = e.CreatePublication(p, PublicationRequest{AssetIDs: []uint64{acmeVideo}, Caption: "again", Platforms: []string{"tiktok"}})
	requireViolations(t, err, "platforms[0]")
}
