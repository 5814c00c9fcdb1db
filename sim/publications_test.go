package sim

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"
)

func TestCreatePublicationRules(t *testing.T) {
	e := newEngine(t, engineOpts{})
	acme := principal(t, e, tokAcme)
	northwind := principal(t, e, tokBusiness)
	pending := stuckImage(t, e, acme)
	failed := failedImage(t, e, acme)
	pg, err := e.ListAssets(northwind, AssetQuery{Kind: KindImage, Status: StatusCompleted, Limit: 11})
	require.NoError(t, err)
	require.Len(t, pg.Data, 11)
	var eleven []uint64
	for _, a := range pg.Data {
		eleven = append(eleven, a.ID)
	}
	now := e.Clock().Now()
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	// req is a valid request to Acme's Instagram account, changed by mod.
	req := func(mod func(*PublicationRequest)) PublicationRequest {
		r := PublicationRequest{AssetIDs: []uint64{acmeImage}, Caption: "Latte art #coffee", Platforms: []string{"instagram"}}
		if mod != nil {
			mod(&r)
		}
		return r
	}

	tests := []struct {
		name   string
		p      Principal
		req    PublicationRequest
		fields []string // the violations, in order; nil when the request is accepted
		status string   // of an accepted request
		media  string   // of an accepted request
	}{
		// asset_ids: 1 to 10 completed images, or one completed video.
		{name: "one image is a carousel of one", p: acme, req: req(nil), status: PubPublishing, media: "carousel"},
		{name: "one video", p: acme, req: req(func(r *PublicationRequest) {
			r.AssetIDs, r.Platforms = []uint64{acmeVideo}, []string{"tiktok", "youtube"}
		}),
			status: PubPublishing, media: "video"},
		{name: "ten images", p: northwind, req: req(func(r *PublicationRequest) { r.AssetIDs, r.Platforms = eleven[:10], []string{"facebook"} }),
			status: PubPublishing, media: "carousel"},
		{name: "eleven images", p: northwind, req: req(func(r *PublicationRequest) { r.AssetIDs, r.Platforms = eleven, []string{"facebook"} }),
			fields: []string{"asset_ids"}},
		{name: "no assets", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = nil }),
			fields: []string{"asset_ids"}},
		{name: "asset not found", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{unknownID} }), fields: []string{"asset_ids[0]"}},
		{name: "asset of another workspace", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{acmeImage, pixelImage} }), fields: []string{"asset_ids[1]"}},
		{name: "asset not completed", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{pending} }), fields: []string{"asset_ids[0]"}},
		{name: "asset failed", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{failed} }), fields: []string{"asset_ids[0]"}},
		{name: "a voice-over", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{acmeVoice} }), fields: []string{"asset_ids[0]"}},
		{name: "music among images", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{acmeImage, acmeMusic} }), fields: []string{"asset_ids[1]"}},
		{name: "a video and an image", p: acme, req: req(func(r *PublicationRequest) { r.AssetIDs = []uint64{acmeVideo, acmeImage} }), fields: []string{"asset_ids"}},
		{name: "two videos", p: acme, req: req(func(r *PublicationRequest) {
			r.AssetIDs, r.Platforms = []uint64{acmeVideo, acmeVideo2}, []string{"tiktok"}
		}),
			fields: []string{"asset_ids"}},

		// caption: at most 2200 characters.
		{name: "caption of 2200", p: acme, req: req(func(r *PublicationRequest) { r.Caption = strings.Repeat("#", 2200) }), status: PubPublishing, media: "carousel"},
		{name: "caption of 2201", p: acme, req: req(func(r *PublicationRequest) { r.Caption = strings.Repeat("#", 2201) }),
			fields: []string{"caption"}},

		// Targets: social_account_ids or platforms, exactly one of the two.
		{name: "by account id", p: acme, req: req(func(r *PublicationRequest) { r.Platforms, r.SocialAccountIDs = nil, []uint64{acmeInstagram} }),
			status: PubPublishing, media: "carousel"},
		{name: "both account ids and platforms", p: acme, req: req(func(r *PublicationRequest) { r.SocialAccountIDs = []uint64{acmeInstagram} }),
			fields: []string{"social_account_ids"}},
		{name: "neither account ids nor platforms", p: acme, req: req(func(r *PublicationRequest) { r.Platforms = nil }),
			fields: []string{"social_account_ids"}},
		{name: "unknown account", p: acme, req: req(func(r *PublicationRequest) { r.Platforms, r.SocialAccountIDs = nil, []uint64{acmeInstagram, unknownID} }),
			fields: []string{"social_account_ids[1]"}},
		{name: "account of another workspace", p: acme, req: req(func(r *PublicationRequest) { r.Platforms, r.SocialAccountIDs = nil, []uint64{pixelInstagram} }),
			fields: []string{"social_account_ids[0]"}},
		{name: "account that cannot publish", p: acme, req: req(func(r *PublicationRequest) { r.Platforms, r.SocialAccountIDs = nil, []uint64{acmeX} }),
			fields: []string{"social_account_ids[0]"}},
		{name: "images to an account without images", p: acme, req: req(func(r *PublicationRequest) { r.Platforms, r.SocialAccountIDs = nil, []uint64{acmeTikTok} }),
			fields: []string{"social_account_ids[0]"}},
		{name: "images to a platform without images", p: acme, req: req(func(r *PublicationRequest) { r.Platforms = []string{"instagram", "youtube"} }),
			fields: []string{"platforms[1]"}},
		{name: "unknown platform", p: acme, req: req(func(r *PublicationRequest) { r.Platforms = []string{"myspace"} }), fields: []string{"platforms[0]"}},
		{name: "platform without a connected account", p: acme, req: req(func(r *PublicationRequest) { r.Platforms = []string{"facebook"} }), fields: []string{"platforms[0]"}},
		{name: "platform whose account cannot publish", p: acme, req: req(func(r *PublicationRequest) { r.Platforms = []string{"linkedin", "x"} }), fields: []string{"platforms[1]"}},

		// scheduled_at: in the future, at most 365 days ahead.
		{name: "scheduled a second ahead", p: acme, req: req(func(r *PublicationRequest) { r.ScheduledAt = at(time.Second) }), status: PubScheduled, media: "carousel"},
		{name: "scheduled 365 days ahead", p: acme, req: req(func(r *PublicationRequest) { r.ScheduledAt = at(MaxScheduleAhead) }), status: PubScheduled, media: "carousel"},
		{name: "scheduled now", p: acme, req: req(func(r *PublicationRequest) { r.ScheduledAt = at(0) }), fields: []string{"scheduled_at"}},
		{name: "scheduled in the past", p: acme, req: req(func(r *PublicationRequest) { r.ScheduledAt = at(-time.Minute) }), fields: []string{"scheduled_at"}},
		{name: "scheduled 365 days and a second ahead", p: acme, req: req(func(r *PublicationRequest) { r.ScheduledAt = at(MaxScheduleAhead + time.Second) }),
			fields: []string{"scheduled_at"}},

		// options: youtube_format short or video, title at most 100 characters.
		{name: "youtube options", p: acme, req: req(func(r *PublicationRequest) {
			r.AssetIDs, r.Platforms = []uint64{acmeVideo}, []string{"youtube"}
			r.Options = &PublicationOptions{YouTubeFormat: "video", Title: strings.Repeat("t", 100)}
		}), status: PubPublishing, media: "video"},
		{name: "youtube_format other than short or video", p: acme, req: req(func(r *PublicationRequest) {
			r.AssetIDs, r.Platforms, r.Options = []uint64{acmeVideo}, []string{"youtube"}, &PublicationOptions{YouTubeFormat: "long"}
		}), fields: []string{"options.youtube_format"}},
		{name: "title of 101", p: acme, req: req(func(r *PublicationRequest) {
			r.AssetIDs, r.Platforms, r.Options = []uint64{acmeVideo}, []string{"youtube"}, &PublicationOptions{Title: strings.Repeat("t", 101)}
		}), fields: []string{"options.title"}},

		{name: "every rule at once", p: acme, req: req(func(r *PublicationRequest) {
			r.AssetIDs, r.Platforms, r.ScheduledAt = []uint64{acmeVoice, unknownID}, []string{"x", "facebook"}, at(-time.Second)
		}), fields: []string{"asset_ids[0]", "asset_ids[1]", "platforms[0]", "platforms[1]", "scheduled_at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, err := e.CreatePublication(tt.p, tt.req)
			if tt.fields != nil {
				requireViolations(t, err, tt.fields...)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.status, pub.Status)
			assert.Equal(t, tt.media, pub.MediaType)
			assert.Equal(t, tt.req.AssetIDs, pub.AssetIDs, "in the order sent")
			assert.Equal(t, tt.req.Caption, pub.Caption)
			assert.Equal(t, tt.req.Options, pub.Options)
			assert.NotEmpty(t, pub.Deliveries)
		})
	}
}

func TestPublishingNotAllowedOnThePlan(t *testing.T) {
	e := newEngine(t, engineOpts{})
	free := principal(t, e, tokFree)
	tests := []struct {
		name string
		req  PublicationRequest
	}{
		{"a valid request", PublicationRequest{AssetIDs: []uint64{pixelImage}, Caption: "hi", Platforms: []string{"instagram"}}},
		{"an invalid request: the plan is checked first", PublicationRequest{AssetIDs: []uint64{unknownID}, Caption: "hi", Platforms: []string{"myspace"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.CreatePublication(free, tt.req)
			be := AsError(err)
			require.Equal(t, EFORBIDDEN, be.Kind, "%v", err)
			assert.Equal(t, "publishing_not_allowed", be.Code)
			assert.Equal(t, "free", be.Details["plan"])
		})
	}
	pg, err := e.Publications(free, "", 0, 50)
	require.NoError(t, err)
	assert.Empty(t, pg.Data, "nothing was created")
}

func TestPublicationLifecycle(t *testing.T) {
	tests := []struct {
		name        string
		failing     []string // platforms failed through FailPlatform before publishing
		caption     string
		assets      []uint64
		platforms   []string
		scheduledIn time.Duration // 0: now
		want        string
		failed      []string // platforms whose delivery fails
	}{
		{"now", nil, "hi", []uint64{acmeImage}, []string{"instagram", "linkedin"}, 0, PubPublished, nil},
		{"a video now", nil, "hi", []uint64{acmeVideo}, []string{"tiktok", "youtube", "instagram"}, 0, PubPublished, nil},
		{"scheduled", nil, "hi", []uint64{acmeImage, acmeUpload}, []string{"instagram", "linkedin"}, 2 * time.Hour, PubPublished, nil},
		{"one platform failing", []string{"instagram"}, "hi", []uint64{acmeImage}, []string{"instagram", "linkedin"}, 0, PubPartiallyPublished, []string{"instagram"}},
		{"one platform failing by caption", nil, "hi [mock:fail-platform=linkedin]", []uint64{acmeImage}, []string{"instagram", "linkedin"}, 0,
			PubPartiallyPublished, []string{"linkedin"}},
		{"one platform failing, scheduled", []string{"linkedin"}, "hi", []uint64{acmeImage}, []string{"instagram", "linkedin"}, time.Hour,
			PubPartiallyPublished, []string{"linkedin"}},
		{"another platform failing", []string{"tiktok"}, "hi", []uint64{acmeImage}, []string{"instagram", "linkedin"}, 0, PubPublished, nil},
		{"every platform failing", []string{"all"}, "hi", []uint64{acmeImage}, []string{"instagram", "linkedin"}, 0, PubFailed, []string{"instagram", "linkedin"}},
		{"each platform failing", []string{"instagram", "linkedin"}, "hi", []uint64{acmeImage}, []string{"instagram", "linkedin"}, 0,
			PubFailed, []string{"instagram", "linkedin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, engineOpts{})
			p := principal(t, e, tokAcme)
			for _, platform := range tt.failing {
				require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.PlatformFailure, Platform: platform}))
			}
			req := PublicationRequest{AssetIDs: tt.assets, Caption: tt.caption, Platforms: tt.platforms}
			created := e.Clock().Now()
			if tt.scheduledIn > 0 {
				at := created.Add(tt.scheduledIn)
				req.ScheduledAt = &at
			}
			pub, err := e.CreatePublication(p, req)
			require.NoError(t, err)
			assert.Equal(t, StampOf(created), pub.CreatedAt)
			require.Len(t, pub.Deliveries, len(tt.platforms), "one delivery per target")
			for i, d := range pub.Deliveries {
				assert.Equal(t, tt.platforms[i], d.Platform, "in the order sent")
			}
			states := func(want string) {
				t.Helper()
				got, err := e.Publication(p, pub.ID)
				require.NoError(t, err)
				assert.Equal(t, want, got.Status)
				for _, d := range got.Deliveries {
					assert.Equal(t, want, d.Status, d.Platform)
					assert.Empty(t, d.PostURL, d.Platform)
				}
			}
			if tt.scheduledIn > 0 {
				assert.Equal(t, PubScheduled, pub.Status)
				assert.Equal(t, StampOf(*req.ScheduledAt), pub.ScheduledAt)
				advance(t, e, tt.scheduledIn-time.Second)
				states(PubScheduled)
				advance(t, e, time.Second)
			} else {
				assert.Equal(t, PubPublishing, pub.Status)
			}
			states(PubPublishing)
			advance(t, e, time.Second) // every platform takes longer than a second
			states(PubPublishing)

			advance(t, e, time.Minute)
			got, err := e.Publication(p, pub.ID)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Status)
			for _, d := range got.Deliveries {
				if slices.Contains(tt.failed, d.Platform) {
					assert.Equal(t, PubFailed, d.Status, d.Platform)
					require.NotNil(t, d.Error, d.Platform)
					assert.Equal(t, "platform_rejected", d.Error.Code)
					assert.Empty(t, d.PostURL)
					assert.True(t, d.PublishedAt.IsZero())
					continue
				}
				assert.Equal(t, PubPublished, d.Status, d.Platform)
				assert.Nil(t, d.Error)
				assert.True(t, strings.HasPrefix(d.PostURL, "https://"+d.Platform+".example.com/"), "a made-up post leads to no real network: %s", d.PostURL)
				assert.False(t, d.PublishedAt.IsZero())
				assert.LessOrEqual(t, d.PublishedAt, got.PublishedAt, "the publication is published with its last delivery")
			}
			assert.Equal(t, tt.want == PubFailed, got.PublishedAt.IsZero(), "published_at once anything is posted")
			assert.Equal(t, 1, e.Lifecycle(0)["publication_"+tt.want])

			// Nothing moves any more.
			advance(t, e, 24*time.Hour)
			again, err := e.Publication(p, pub.ID)
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	}
}

func TestCancelPublication(t *testing.T) {
	tests := []struct {
		name string
		// publish creates the publication and brings it to the state to cancel.
		publish func(t *testing.T, e *Engine, p Principal) Publication
		want    string   // status after cancelling
		kind    Kind     // the error instead, when it cannot be cancelled
		states  []string // of the deliveries after cancelling
	}{
		{
			name: "scheduled",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				return publishIn(t, e, p, time.Hour, acmeImage, "instagram", "linkedin")
			},
			want: PubCancelled, states: []string{PubCancelled, PubCancelled},
		},
		{
			name: "publishing, nothing delivered yet",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				return publishIn(t, e, p, 0, acmeImage, "instagram", "linkedin")
			},
			want: PubCancelled, states: []string{PubCancelled, PubCancelled},
		},
		{
			name: "publishing, partly delivered",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				// TikTok takes 4.8 to 7.2 s, YouTube 9.6 to 14.4 s.
				pub := publishIn(t, e, p, 0, acmeVideo, "tiktok", "youtube")
				advance(t, e, 8*time.Second)
				return pub
			},
			want: PubPartiallyPublished, states: []string{PubPublished, PubCancelled},
		},
		{
			name: "published",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				pub := publishIn(t, e, p, 0, acmeImage, "instagram")
				advance(t, e, time.Minute)
				return pub
			},
			kind: ECONFLICT,
		},
		{
			name: "already cancelled",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				pub := publishIn(t, e, p, time.Hour, acmeImage, "instagram")
				_, err := e.CancelPublication(p.WorkspaceID, pub.ID)
				require.NoError(t, err)
				return pub
			},
			kind: ECONFLICT,
		},
		{
			name: "of another workspace",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				pub := publishIn(t, e, principal(t, e, tokBusiness), time.Hour, 59, "facebook")
				pub.WorkspaceID = p.WorkspaceID // asked for as if it were the caller's
				return pub
			},
			kind: ENOTFOUND,
		},
		{
			name: "unknown",
			publish: func(t *testing.T, e *Engine, p Principal) Publication {
				return Publication{ID: unknownID, WorkspaceID: p.WorkspaceID}
			},
			kind: ENOTFOUND,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, engineOpts{})
			p := principal(t, e, tokAcme)
			pub := tt.publish(t, e, p)
			before, _ := e.Publication(p, pub.ID)
			got, err := e.CancelPublication(pub.WorkspaceID, pub.ID)
			if tt.kind != "" {
				require.True(t, IsKind(err, tt.kind), "%v", err)
				after, _ := e.Publication(p, pub.ID)
				assert.Equal(t, before, after, "nothing changed")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Status)
			var states []string
			for _, d := range got.Deliveries {
				states = append(states, d.Status)
			}
			assert.Equal(t, tt.states, states)

			// Its pending events are gone: later it is just as it was.
			advance(t, e, 2*time.Hour)
			later, err := e.Publication(p, pub.ID)
			require.NoError(t, err)
			assert.Equal(t, got, later)
			_, err = e.CancelPublication(p.WorkspaceID, pub.ID)
			assert.True(t, IsKind(err, ECONFLICT), "cancelled once: %v", err)
		})
	}
}

// publishIn publishes one asset to platforms now (in 0) or scheduled in d.
func publishIn(t *testing.T, e *Engine, p Principal, d time.Duration, asset uint64, platforms ...string) Publication {
	t.Helper()
	req := PublicationRequest{AssetIDs: []uint64{asset}, Caption: "hi", Platforms: platforms}
	if d > 0 {
		at := e.Clock().Now().Add(d)
		req.ScheduledAt = &at
	}
	pub, err := e.CreatePublication(p, req)
	require.NoError(t, err)
	return pub
}

func TestListPublications(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokAcme)
	// Oldest first: now, in an hour, in two hours, now, in three hours (cancelled).
	var ids []uint64
	for _, d := range []time.Duration{0, time.Hour, 2 * time.Hour, 0, 3 * time.Hour} {
		ids = append(ids, publishIn(t, e, p, d, acmeImage, "instagram").ID)
	}
	_, err := e.CancelPublication(p.WorkspaceID, ids[4])
	require.NoError(t, err)
	other := publishIn(t, e, principal(t, e, tokBusiness), 0, 59, "facebook")
	advance(t, e, time.Minute) // the two published now are delivered

	list := func(status string, limit int) [][]uint64 {
		t.Helper()
		var pages [][]uint64
		var cursor uint64
		for {
			pg, err := e.Publications(p, status, cursor, limit)
			require.NoError(t, err)
			var page []uint64
			for _, pub := range pg.Data {
				page = append(page, pub.ID)
				if status != "" {
					assert.Equal(t, status, pub.Status)
				}
			}
			pages = append(pages, page)
			next, ok := NextCursor(pg, func(p Publication) uint64 { return p.ID })
			if !ok {
				return pages
			}
			cursor = next
		}
	}
	tests := []struct {
		name   string
		status string
		limit  int
		pages  [][]uint64
	}{
		{"all, newest first", "", 50, [][]uint64{{ids[4], ids[3], ids[2], ids[1], ids[0]}}},
		{"all, two a page", "", 2, [][]uint64{{ids[4], ids[3]}, {ids[2], ids[1]}, {ids[0]}}},
		{"all, five a page", "", 5, [][]uint64{{ids[4], ids[3], ids[2], ids[1], ids[0]}}},
		{"published", PubPublished, 50, [][]uint64{{ids[3], ids[0]}}},
		{"published, one a page", PubPublished, 1, [][]uint64{{ids[3]}, {ids[0]}}},
		{"scheduled", PubScheduled, 50, [][]uint64{{ids[2], ids[1]}}},
		{"cancelled", PubCancelled, 50, [][]uint64{{ids[4]}}},
		{"publishing", PubPublishing, 50, [][]uint64{nil}},
		{"failed", PubFailed, 50, [][]uint64{nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.pages, list(tt.status, tt.limit))
		})
	}
	assert.NotContains(t, list("", 50)[0], other.ID, "another workspace's publication is not listed")

	// The status index follows the transitions.
	advance(t, e, 2*time.Hour)
	assert.Equal(t, [][]uint64{nil}, list(PubScheduled, 50))
	assert.Equal(t, [][]uint64{{ids[3], ids[2], ids[1], ids[0]}}, list(PubPublished, 50))
}
