package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"
)

func uint64p(v uint64) *uint64 { return &v }

func TestCreateEncoreRules(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	small := upload(t, e, p, 640, 479, "landscape, too short").ID
	narrow := upload(t, e, p, 479, 2000, "portrait, too narrow").ID
	square := upload(t, e, p, 480, 480, "just large enough").ID
	pending := stuckImage(t, e, p)
	failed := failedImage(t, e, p)
	slugs := []any{"golden-hour", "disco-spin", "snow-globe", "anime-me", "zoom-to-space"}
	photo := "https://images.example.com/portrait.jpg" // resolved offline to a 1536x2048 JPEG

	tests := []struct {
		name    string
		req     EncoreRequest
		fields  []string // the violations, in order; nil when the request is accepted
		allowed []any    // of the first violation
	}{
		// Exactly one of image_url, asset_id and character_id.
		{name: "image_url", req: EncoreRequest{Effect: "golden-hour", ImageURL: photo}},
		{name: "asset_id", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(acmeImage)}},
		{name: "character_id", req: EncoreRequest{Effect: "golden-hour", CharacterID: uint64p(acmeMaya)}},
		{name: "no source", req: EncoreRequest{Effect: "golden-hour"}, fields: []string{"image_url"}},
		{name: "image_url and asset_id", req: EncoreRequest{Effect: "golden-hour", ImageURL: photo, AssetID: uint64p(acmeImage)}, fields: []string{"image_url"}},
		{name: "asset_id and character_id", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(acmeImage), CharacterID: uint64p(acmeMaya)},
			fields: []string{"image_url"}},
		{name: "all three", req: EncoreRequest{Effect: "golden-hour", ImageURL: photo, AssetID: uint64p(acmeImage), CharacterID: uint64p(acmeMaya)},
			fields: []string{"image_url"}},

		// effect: a slug of the catalog.
		{name: "unknown effect", req: EncoreRequest{Effect: "moonwalk", ImageURL: photo}, fields: []string{"effect"}, allowed: slugs},
		{name: "no effect", req: EncoreRequest{ImageURL: photo}, fields: []string{"effect"}, allowed: slugs},
		{name: "unknown effect and no source", req: EncoreRequest{Effect: "moonwalk"}, fields: []string{"effect", "image_url"}, allowed: slugs},
		{name: "unknown effect and a bad asset", req: EncoreRequest{Effect: "moonwalk", AssetID: uint64p(acmeVideo)}, fields: []string{"effect", "asset_id"}, allowed: slugs},

		// image_url: https or a data URI of a JPEG, PNG or WEBP, at least 480 px on its shorter side.
		{name: "photo of 480x480", req: EncoreRequest{Effect: "golden-hour", ImageURL: pngDataURI(t, 480, 480)}},
		{name: "photo 479 px high", req: EncoreRequest{Effect: "golden-hour", ImageURL: pngDataURI(t, 1000, 479)}, fields: []string{"image_url"}},
		{name: "photo 479 px wide", req: EncoreRequest{Effect: "golden-hour", ImageURL: pngDataURI(t, 479, 1000)}, fields: []string{"image_url"}},
		{name: "a GIF", req: EncoreRequest{Effect: "golden-hour", ImageURL: gifDataURI(t)}, fields: []string{"image_url"}},
		{name: "a data URI of text", req: EncoreRequest{Effect: "golden-hour", ImageURL: "data:text/plain;base64,aGk="}, fields: []string{"image_url"}},
		{name: "a data URI that is not base64", req: EncoreRequest{Effect: "golden-hour", ImageURL: "data:image/png;base64,!!!"}, fields: []string{"image_url"}},
		{name: "an http URL", req: EncoreRequest{Effect: "golden-hour", ImageURL: "http://images.example.com/portrait.jpg"}, fields: []string{"image_url"}},

		// asset_id: a completed image of the workspace, at least 480 px on its shorter side.
		{name: "an upload of 480x480", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(square)}},
		{name: "a fixture upload", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(acmeUpload)}},
		{name: "asset not found", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(unknownID)}, fields: []string{"asset_id"}},
		{name: "asset of another workspace", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(pixelImage)}, fields: []string{"asset_id"}},
		{name: "a video", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(acmeVideo)}, fields: []string{"asset_id"}},
		{name: "a voice-over", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(acmeVoice)}, fields: []string{"asset_id"}},
		{name: "an image not completed", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(pending)}, fields: []string{"asset_id"}},
		{name: "a failed image", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(failed)}, fields: []string{"asset_id"}},
		{name: "an image 479 px high", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(small)}, fields: []string{"asset_id"}},
		{name: "an image 479 px wide", req: EncoreRequest{Effect: "golden-hour", AssetID: uint64p(narrow)}, fields: []string{"asset_id"}},

		// character_id: a ready character of the workspace.
		{name: "character still training", req: EncoreRequest{Effect: "golden-hour", CharacterID: uint64p(acmeDraftDan)}, fields: []string{"character_id"}},
		{name: "character of another workspace", req: EncoreRequest{Effect: "golden-hour", CharacterID: uint64p(pixelCharacter)}, fields: []string{"character_id"}},
		{name: "unknown character", req: EncoreRequest{Effect: "golden-hour", CharacterID: uint64p(unknownID)}, fields: []string{"character_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := balanceOf(t, e, p.WorkspaceID)
			c, err := e.CreateEncore(context.Background(), p, tt.req)
			if tt.fields != nil {
				vs := requireViolations(t, err, tt.fields...)
				if tt.allowed != nil {
					assert.Equal(t, tt.allowed, vs[0].Allowed)
				}
				assert.Equal(t, before, balanceOf(t, e, p.WorkspaceID), "nothing charged")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.req.Effect, c.Effect)
			assert.Equal(t, int64(15), c.CreditsCharged)
			assert.Equal(t, before-15, c.CreditsBalance)
			assert.Equal(t, KindVideo, c.Video.Kind)
			assert.Equal(t, c.AssetID, c.Video.ID)
		})
	}
	checkLedger(t, e, p.WorkspaceID)
}

func TestEncoreChargesEachEffectsCredits(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	effects := e.EncoreEffects()
	require.Len(t, effects, 5)
	for _, f := range effects {
		t.Run(f.Slug, func(t *testing.T) {
			before := balanceOf(t, e, p.WorkspaceID)
			c, err := e.CreateEncore(context.Background(), p, EncoreRequest{Effect: f.Slug, ImageURL: "https://images.example.com/" + f.Slug + ".jpg"})
			require.NoError(t, err)
			assert.Equal(t, int64(f.Credits), c.CreditsCharged)
			assert.Equal(t, int64(f.Credits), c.Credits)
			assert.Equal(t, before-int64(f.Credits), c.CreditsBalance)
			assert.Equal(t, c.CreditsBalance, balanceOf(t, e, p.WorkspaceID))
			assert.Equal(t, int64(f.Credits), c.Video.Credits, "the video asset carries the charge")
			assert.Equal(t, f.DurationSeconds, c.Video.DurationSeconds)
			assert.Equal(t, 720, c.Video.Width)
			assert.Equal(t, 1280, c.Video.Height)

			charges := ledgerOf(checkLedger(t, e, p.WorkspaceID), LedgerCharge, c.ID)
			require.Len(t, charges, 1)
			assert.Equal(t, int64(f.Credits), charges[0].Amount)
			assert.Equal(t, f.Slug, charges[0].Effect)
			assert.Equal(t, c.JobID, charges[0].JobID)
		})
	}
}

func TestEncoreInsufficientCredits(t *testing.T) {
	const cost = 15 // golden-hour
	req := EncoreRequest{Effect: "golden-hour", ImageURL: "https://images.example.com/me.jpg"}
	tests := []struct {
		name  string
		grant int64 // credits granted to the empty wallet
		ok    int   // creations that succeed before one is refused
	}{
		{"no credits", 0, 0},
		{"one credit short", cost - 1, 0},
		{"exactly enough", cost, 1},
		{"enough for two", 2 * cost, 2},
		{"enough for two and a bit", 3*cost - 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, engineOpts{})
			p := principal(t, e, tokNoCredits)
			if tt.grant > 0 {
				_, err := e.GrantCredits(p.WorkspaceID, tt.grant, "")
				require.NoError(t, err)
			}
			for i := 0; i < tt.ok; i++ {
				c, err := e.CreateEncore(context.Background(), p, req)
				require.NoError(t, err)
				assert.Equal(t, tt.grant-int64(i+1)*cost, c.CreditsBalance)
			}
			left := tt.grant - int64(tt.ok)*cost
			_, err := e.CreateEncore(context.Background(), p, req)
			be := AsError(err)
			require.Equal(t, EPAYMENT, be.Kind, "%v", err)
			assert.Equal(t, "insufficient_credits", be.Code)
			assert.EqualValues(t, cost, be.Details["required"])
			assert.EqualValues(t, left, be.Details["balance"])
			assert.EqualValues(t, cost-left, be.Details["shortfall"])

			assert.Equal(t, left, balanceOf(t, e, p.WorkspaceID), "the refusal charged nothing")
			var charges int
			for _, le := range checkLedger(t, e, p.WorkspaceID) {
				if le.Type == LedgerCharge {
					charges++
				}
			}
			assert.Equal(t, tt.ok, charges)
			pg, err := e.ListAssets(p, AssetQuery{Limit: 50})
			require.NoError(t, err)
			assert.Len(t, pg.Data, tt.ok, "one video per accepted creation")
		})
	}
}

func TestEncoreConcurrencyLimit(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	// The marker skips the provider queue: each takes a minute of processing.
	photo := "https://images.example.com/me.jpg?take=[mock:delay=60]"
	var ids []uint64
	for i := 0; i < 5; i++ {
		c, err := e.CreateEncore(context.Background(), p, EncoreRequest{Effect: "golden-hour", ImageURL: photo})
		require.NoError(t, err)
		ids = append(ids, c.ID)
	}
	// A generation has slots of its own.
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x [mock:delay=30]"})
	require.NoError(t, err)
	assert.Equal(t, StatusProcessing, g.Status)

	steps := []struct {
		after time.Duration
		want  []string
	}{
		{0, []string{StatusProcessing, StatusProcessing, StatusProcessing, StatusQueued, StatusQueued}},
		{time.Minute - time.Millisecond, []string{StatusProcessing, StatusProcessing, StatusProcessing, StatusQueued, StatusQueued}},
		{time.Minute, []string{StatusCompleted, StatusCompleted, StatusCompleted, StatusProcessing, StatusProcessing}},
		{2 * time.Minute, []string{StatusCompleted, StatusCompleted, StatusCompleted, StatusCompleted, StatusCompleted}},
	}
	start := e.Clock().Now()
	for _, s := range steps {
		t.Run(s.after.String(), func(t *testing.T) {
			require.NoError(t, e.SetTime(start.Add(s.after)))
			for i, id := range ids {
				v, err := e.Encore(context.Background(), p, id, 0)
				require.NoError(t, err)
				assert.Equal(t, s.want[i], v.Status, "creation %d", i)
				assert.Equal(t, s.want[i], v.Video.Status, "its video, %d", i)
			}
		})
	}
	// The queued ones started the moment the first ones ended.
	for i, id := range ids {
		v, err := e.Encore(context.Background(), p, id, 0)
		require.NoError(t, err)
		job := e.jobOf(t, p, v.AssetID)
		want := start
		if i >= 3 {
			want = start.Add(time.Minute)
		}
		assert.Equal(t, StampOf(want), job.StartedAt, "creation %d", i)
	}
}

func TestEncoreFailureRefundsOnce(t *testing.T) {
	const effect, cost = "disco-spin", 20
	tests := []struct {
		name string
		// before runs before the creation, fail after it, to make it fail.
		before func(t *testing.T, e *Engine)
		fail   func(t *testing.T, e *Engine, c EncoreCreated)
		code   string
	}{
		{
			name: "fail next, while processing",
			before: func(t *testing.T, e *Engine) {
				require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.JobFailure, First: 1, Modality: "encore"}))
			},
			fail: func(t *testing.T, e *Engine, c EncoreCreated) { advance(t, e, 10*time.Minute) },
			code: "provider_error",
		},
		{
			name: "fail next of the effect, while queued",
			before: func(t *testing.T, e *Engine) {
				require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.JobFailure, First: 1, Model: effect, FailStage: StatusQueued, Code: "provider_unavailable"}))
			},
			fail: func(t *testing.T, e *Engine, c EncoreCreated) { advance(t, e, 10*time.Minute) },
			code: "provider_unavailable",
		},
		{
			name: "control action while processing",
			fail: func(t *testing.T, e *Engine, c EncoreCreated) {
				advance(t, e, 10*time.Second)
				v, err := e.ControlEncore(c.ID, JobFail, "content_policy")
				require.NoError(t, err)
				assert.Equal(t, StatusFailed, v.Status)
			},
			code: "content_policy",
		},
		{
			name: "control action while waiting for a slot",
			before: func(t *testing.T, e *Engine) {
				p := principal(t, e, tokAcme)
				for i := 0; i < 3; i++ {
					_, err := e.CreateEncore(context.Background(), p, EncoreRequest{Effect: "golden-hour", ImageURL: "https://images.example.com/busy.jpg"})
					require.NoError(t, err)
				}
			},
			fail: func(t *testing.T, e *Engine, c EncoreCreated) {
				require.True(t, e.jobOf(t, principal(t, e, tokAcme), c.AssetID).StartedAt.IsZero(), "it waits for a slot")
				_, err := e.ControlEncore(c.ID, JobFail, "")
				require.NoError(t, err)
			},
			code: "provider_error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, engineOpts{})
			p := principal(t, e, tokAcme)
			if tt.before != nil {
				tt.before(t, e)
			}
			before := balanceOf(t, e, p.WorkspaceID)
			c, err := e.CreateEncore(context.Background(), p, EncoreRequest{Effect: effect, ImageURL: "https://images.example.com/me.jpg"})
			require.NoError(t, err)
			assert.Equal(t, before-cost, c.CreditsBalance)
			tt.fail(t, e, c)

			v, err := e.Encore(context.Background(), p, c.ID, 0)
			require.NoError(t, err)
			assert.Equal(t, StatusFailed, v.Status)
			require.NotNil(t, v.Error)
			assert.Equal(t, tt.code, v.Error.Code)
			assert.Zero(t, v.Credits, "the creation shows the refund")
			assert.Equal(t, StatusFailed, v.Video.Status)
			assert.Zero(t, v.Video.Credits, "so does its video")
			assert.Equal(t, before, balanceOf(t, e, p.WorkspaceID), "refunded")

			// Neither a second control action nor time refunds again.
			_, err = e.ControlEncore(c.ID, JobFail, "")
			assert.True(t, IsKind(err, ECONFLICT), "%v", err)
			advance(t, e, 24*time.Hour)
			assert.Equal(t, before, balanceOf(t, e, p.WorkspaceID))
			ledger := checkLedger(t, e, p.WorkspaceID)
			require.Len(t, ledgerOf(ledger, LedgerCharge, c.ID), 1)
			refunds := ledgerOf(ledger, LedgerRefund, c.ID)
			require.Len(t, refunds, 1, "refunded exactly once")
			assert.Equal(t, int64(cost), refunds[0].Amount)
			assert.Equal(t, effect, refunds[0].Effect)
			assert.Equal(t, 1, e.Lifecycle(0)["encore_failed_refunded"])
		})
	}
}
