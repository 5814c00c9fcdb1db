package sim

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"
	bolt "go.etcd.io/bbolt"
)

// The engine's update contract: "A function must not write before it
// returns an *Error". Writes are committed in groups, and a business error
// does not roll the group back, so a write made before one would be
// committed with the group, half an operation that the caller was told
// failed. The tests below hold every public operation to it: the whole
// database must read the same before and after a refused call.

// dbState is every key/value pair and every sequence of every bucket.
type dbState map[string]string

// stateOf reads the whole database in one plain read transaction (nothing
// is settled first, unlike the engine's reads).
//
// Two things are left out: meta "clock" and the rate_windows bucket. Every
// group's transaction ends with finish(), which saves the clock and flushes
// the rate windows counted by Allow: bookkeeping of the group's commit,
// written whatever its functions do, not a write of the refused function.
// (Here the clock does not move and nothing calls Allow, so they would not
// change anyway; leaving them out keeps the check about the functions.)
func stateOf(t testing.TB, e *Engine) dbState {
	t.Helper()
	out := dbState{}
	require.NoError(t, e.db.View(func(btx *bolt.Tx) error {
		return btx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if bytes.Equal(name, bRate) {
				return nil
			}
			out[fmt.Sprintf("%s sequence", name)] = fmt.Sprint(b.Sequence())
			return b.ForEach(func(k, v []byte) error {
				if bytes.Equal(name, bMeta) && string(k) == "clock" {
					return nil
				}
				out[fmt.Sprintf("%s %x", name, k)] = string(v)
				return nil
			})
		})
	}))
	return out
}

// diff lists what changed from s to after, one line per key, sorted.
func (s dbState) diff(after dbState) []string {
	var out []string
	for k, v := range s {
		w, ok := after[k]
		switch {
		case !ok:
			out = append(out, "removed "+k)
		case v != w:
			out = append(out, fmt.Sprintf("changed %s: %.80q -> %.80q", k, v, w))
		}
	}
	for k := range after {
		if _, ok := s[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	slices.Sort(out)
	return out
}

// refusedChangesNothing runs call, which must fail with an error of kind,
// and asserts that the database, the lifecycle counts and the next due
// event are as they were.
func refusedChangesNothing(t *testing.T, e *Engine, kind Kind, call func() error) {
	t.Helper()
	require.NoError(t, e.Settle()) // whatever is due is applied before, not during, the call
	before, lifecycle := stateOf(t, e), e.Lifecycle(0)
	nextBefore, _, _ := e.NextDue()

	err := call()
	require.Error(t, err)
	require.True(t, IsKind(err, kind), "want a %s error, got %v", kind, err)

	assert.Empty(t, before.diff(stateOf(t, e)), "the refused call wrote to the database")
	assert.Equal(t, lifecycle, e.Lifecycle(0), "the refused call counted a lifecycle path")
	nextAfter, _, _ := e.NextDue()
	assert.Equal(t, nextBefore, nextAfter, "the refused call scheduled or removed an event")
}

func TestStateDiffSeesWritesBeforeABusinessError(t *testing.T) {
	refuse := &Error{Kind: EINVALID, Code: "validation_failed", Message: "refused"}
	tests := []struct {
		name  string
		fn    func(*tx) error
		wrote bool
	}{
		{"put a record", func(t *tx) error {
			if err := putJSON(t.b(bFaults), []byte("state"), LegacyFaults{FailPlatforms: []string{"x"}}); err != nil {
				return err
			}
			return refuse
		}, true},
		{"take an id", func(t *tx) error {
			if _, err := t.b(bPubs).NextSequence(); err != nil {
				return err
			}
			return refuse
		}, true},
		{"delete a record", func(t *tx) error {
			if err := t.b(bTokens).Delete([]byte(tokAcme)); err != nil {
				return err
			}
			return refuse
		}, true},
		{"overwrite a record with itself", func(t *tx) error {
			ws, err := t.workspace(1)
			if err != nil {
				return err
			}
			if err := t.putWorkspace(ws); err != nil {
				return err
			}
			return refuse
		}, false},
		{"only read", func(t *tx) error {
			if _, err := t.workspace(1); err != nil {
				return err
			}
			return refuse
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, engineOpts{})
			before := stateOf(t, e)
			err := e.update(tt.fn)
			require.True(t, IsKind(err, EINVALID), "%v", err)
			assert.Equal(t, tt.wrote, len(before.diff(stateOf(t, e))) > 0, "%v", before.diff(stateOf(t, e)))
		})
	}
}

func TestRefusedOperationsWriteNothing(t *testing.T) {
	e := newEngine(t, engineOpts{})
	ctx := context.Background()
	acme := principal(t, e, tokAcme)
	free := principal(t, e, tokFree)
	broke := principal(t, e, tokNoCredits)

	// State for the cases: a running and a finished job, a finished Encore
	// creation, a published and a scheduled publication.
	running := stuckImage(t, e, acme)
	done, err := e.CreateGeneration(ctx, acme, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "done [mock:delay=1]"})
	require.NoError(t, err)
	encore, err := e.CreateEncore(ctx, acme, EncoreRequest{Effect: "golden-hour", ImageURL: "https://images.example.com/me.jpg?[mock:delay=1]"})
	require.NoError(t, err)
	published := publishIn(t, e, acme, 0, acmeImage, "instagram")
	scheduled := publishIn(t, e, acme, time.Hour, acmeImage, "linkedin")
	advance(t, e, time.Minute)
	require.Equal(t, StatusCompleted, e.statusOf(t, acme, done.Assets[0].ID))
	pub, err := e.Publication(acme, published.ID)
	require.NoError(t, err)
	require.Equal(t, PubPublished, pub.Status)
	// Faults a successful creation would consume or apply.
	require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.JobFailure, First: 1}))
	require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.PlatformFailure, Platform: "instagram"}))
	var otherSeed bytes.Buffer // a snapshot of a simulation of another seed
	_, err = newEngine(t, engineOpts{seed: 9}).Snapshot(&otherSeed)
	require.NoError(t, err)

	tests := []struct {
		name string
		kind Kind
		call func() error
	}{
		// Generations.
		{"generation without credits", EPAYMENT, func() error {
			_, err := e.CreateGeneration(ctx, broke, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Count: intp(2)})
			return err
		}},
		{"generation with an option the model lacks", EINVALID, func() error {
			_, err := e.CreateGeneration(ctx, acme, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", AspectRatio: "21:9"})
			return err
		}},
		{"generation with a reference of another workspace", EINVALID, func() error {
			_, err := e.CreateGeneration(ctx, acme, GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x", ReferenceAssetIDs: []uint64{pixelImage}})
			return err
		}},
		{"generation with a reference not completed", EINVALID, func() error {
			_, err := e.CreateGeneration(ctx, acme, GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x", ReferenceAssetIDs: []uint64{running}})
			return err
		}},
		{"gift model with a bad reference", EINVALID, func() error {
			_, err := e.CreateGeneration(ctx, acme, GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x", ReferenceAssetIDs: []uint64{acmeVideo}})
			return err
		}},

		// Encore.
		{"Encore without a source", EINVALID, func() error {
			_, err := e.CreateEncore(ctx, acme, EncoreRequest{Effect: "golden-hour"})
			return err
		}},
		{"Encore from a video", EINVALID, func() error {
			_, err := e.CreateEncore(ctx, acme, EncoreRequest{Effect: "golden-hour", AssetID: uint64p(acmeVideo)})
			return err
		}},
		{"Encore from a character in training", EINVALID, func() error {
			_, err := e.CreateEncore(ctx, acme, EncoreRequest{Effect: "golden-hour", CharacterID: uint64p(acmeDraftDan)})
			return err
		}},
		{"Encore from a small photo", EINVALID, func() error {
			_, err := e.CreateEncore(ctx, acme, EncoreRequest{Effect: "golden-hour", ImageURL: pngDataURI(t, 100, 100)})
			return err
		}},
		{"Encore without credits", EPAYMENT, func() error {
			_, err := e.CreateEncore(ctx, broke, EncoreRequest{Effect: "zoom-to-space", ImageURL: "https://images.example.com/me.jpg"})
			return err
		}},

		// Uploads.
		{"upload without a source", EINVALID, func() error {
			_, err := e.Upload(ctx, acme, UploadInput{})
			return err
		}},
		{"upload of a GIF", EINVALID, func() error {
			_, err := e.Upload(ctx, acme, UploadInput{ImageURL: gifDataURI(t)})
			return err
		}},

		// Publications.
		{"publication of a voice-over", EINVALID, func() error {
			_, err := e.CreatePublication(acme, PublicationRequest{AssetIDs: []uint64{acmeVoice}, Caption: "x", Platforms: []string{"instagram"}})
			return err
		}},
		{"publication to an account that cannot publish", EINVALID, func() error {
			_, err := e.CreatePublication(acme, PublicationRequest{AssetIDs: []uint64{acmeImage}, Caption: "x", SocialAccountIDs: []uint64{acmeX}})
			return err
		}},
		{"publication scheduled too far ahead", EINVALID, func() error {
			at := e.Clock().Now().Add(MaxScheduleAhead + time.Second)
			_, err := e.CreatePublication(acme, PublicationRequest{AssetIDs: []uint64{acmeImage}, Caption: "x", Platforms: []string{"instagram"}, ScheduledAt: &at})
			return err
		}},
		{"publication on the free plan", EFORBIDDEN, func() error {
			_, err := e.CreatePublication(free, PublicationRequest{AssetIDs: []uint64{pixelImage}, Caption: "x", Platforms: []string{"instagram"}})
			return err
		}},
		{"cancel a published publication", ECONFLICT, func() error {
			_, err := e.CancelPublication(acme.WorkspaceID, published.ID)
			return err
		}},
		{"cancel another workspace's publication", ENOTFOUND, func() error {
			_, err := e.CancelPublication(free.WorkspaceID, scheduled.ID)
			return err
		}},
		{"cancel an unknown publication", ENOTFOUND, func() error {
			_, err := e.CancelPublicationAny(unknownID)
			return err
		}},

		// Workspaces, tokens and credits.
		{"workspace with a taken token", ECONFLICT, func() error {
			_, err := e.AddWorkspace(WorkspaceSpec{Name: "Copycat", Credits: 100, Token: tokAcme})
			return err
		}},
		{"workspace of an unknown plan", EINVALID, func() error {
			_, err := e.AddWorkspace(WorkspaceSpec{Plan: "platinum"})
			return err
		}},
		{"token of an unknown workspace", ENOTFOUND, func() error {
			_, err := e.AddToken(unknownID, TokenSpec{Scopes: []string{ScopeRead}})
			return err
		}},
		{"token already taken", ECONFLICT, func() error {
			_, err := e.AddToken(acme.WorkspaceID, TokenSpec{Scopes: []string{ScopeRead}, Token: tokBusiness})
			return err
		}},
		{"token with an unknown scope", EINVALID, func() error {
			_, err := e.AddToken(acme.WorkspaceID, TokenSpec{Scopes: []string{"admin"}})
			return err
		}},
		{"credits removed beyond the balance", EINVALID, func() error {
			_, err := e.GrantCredits(acme.WorkspaceID, -balanceOf(t, e, acme.WorkspaceID)-1, "too much")
			return err
		}},
		{"credits granted beyond the bound", EINVALID, func() error {
			_, err := e.GrantCredits(acme.WorkspaceID, math.MaxInt64/2, "too much")
			return err
		}},
		{"credits of an unknown workspace", ENOTFOUND, func() error {
			_, err := e.GrantCredits(unknownID, 10, "")
			return err
		}},

		// Job actions.
		{"fail a finished job", ECONFLICT, func() error {
			_, err := e.ControlAsset(done.Assets[0].ID, JobFail, "")
			return err
		}},
		{"complete a finished job", ECONFLICT, func() error {
			_, err := e.ControlAsset(done.Assets[0].ID, JobComplete, "")
			return err
		}},
		{"act on an upload", ECONFLICT, func() error {
			_, err := e.ControlAsset(acmeUpload, JobFail, "")
			return err
		}},
		{"act on an unknown asset", ENOTFOUND, func() error {
			_, err := e.ControlAsset(unknownID, JobFail, "")
			return err
		}},
		{"unknown action on a running job", EINVALID, func() error {
			_, err := e.ControlAsset(running, JobAction("pause"), "")
			return err
		}},
		{"fail a finished Encore creation", ECONFLICT, func() error {
			_, err := e.ControlEncore(encore.ID, JobFail, "")
			return err
		}},
		{"act on an unknown Encore creation", ENOTFOUND, func() error {
			_, err := e.ControlEncore(unknownID, JobStick, "")
			return err
		}},

		// Faults and the clock.
		{"clock backwards", EINVALID, func() error { _, err := e.Advance(-time.Second); return err }},
		{"clock past its bound", EINVALID, func() error { return e.SetTime(MaxTime.Add(time.Hour)) }},
		{"restore a file that is no state", EINVALID, func() error { return e.Restore(strings.NewReader("not a bbolt file")) }},
		{"restore a snapshot of another seed", EINVALID, func() error { return e.Restore(bytes.NewReader(otherSeed.Bytes())) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refusedChangesNothing(t, e, tt.kind, tt.call)
		})
	}
}
