package contract_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type apiSocialAccount struct {
	ID             int64  `json:"id"`
	Object         string `json:"object"`
	Platform       string `json:"platform"`
	Name           string `json:"name"`
	Handle         string `json:"handle"`
	Publishable    bool   `json:"publishable"`
	SupportsImages bool   `json:"supports_images"`
}

type apiSocialAccountList struct {
	apiList[apiSocialAccount]
	PublishingAllowed bool   `json:"publishing_allowed"`
	ConnectURL        string `json:"connect_url"`
}

// Acme Studio's fixture library and accounts used below.
const (
	acmeImage1, acmeImage2, acmeImage3 = 1, 4, 9 // completed generated images
	acmeUpload                         = 3       // completed upload (an image)
	acmeVideo, acmeVideo2              = 2, 5    // completed videos
	acmeVoice                          = 11      // completed voice-over
)

// socialAccounts returns the workspace's accounts by platform.
func (e *env) socialAccounts(token string) map[string]apiSocialAccount {
	e.t.Helper()
	out := map[string]apiSocialAccount{}
	for _, a := range decodeAs[apiSocialAccountList](e.get(token, "/social/accounts").expect(http.StatusOK)).Data {
		out[a.Platform] = a
	}
	return out
}

func (e *env) publish(token string, body map[string]any) apiPublication {
	e.t.Helper()
	return decodeAs[apiPublication](e.post(token, "/social/publications", body).expect(http.StatusCreated))
}

func (e *env) publication(token string, id int64) apiPublication {
	e.t.Helper()
	return decodeAs[apiPublication](e.get(token, fmt.Sprintf("/social/publications/%d", id)).expect(http.StatusOK))
}

func TestListSocialAccounts(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	list := decodeAs[apiSocialAccountList](e.get(keyRead, "/social/accounts").expect(http.StatusOK))
	assert.Equal(t, "list", list.Object)
	assert.False(t, list.HasMore, "not paginated")
	assert.Nil(t, list.NextCursor)
	assert.True(t, list.PublishingAllowed, "the pro plan publishes")
	u, err := url.Parse(list.ConnectURL)
	require.NoError(t, err)
	assert.True(t, u.IsAbs(), list.ConnectURL)

	want := map[string]struct{ publishable, images bool }{
		"instagram": {true, true}, "tiktok": {true, false}, "youtube": {true, false}, "linkedin": {true, true}, "x": {false, true},
	}
	require.Len(t, list.Data, len(want))
	for _, a := range list.Data {
		assert.Equal(t, "social_account", a.Object)
		assert.Positive(t, a.ID)
		assert.NotEmpty(t, a.Name)
		assert.True(t, strings.HasPrefix(a.Handle, "@"), a.Handle)
		w, ok := want[a.Platform]
		require.True(t, ok, a.Platform)
		assert.Equal(t, w.publishable, a.Publishable, a.Platform)
		assert.Equal(t, w.images, a.SupportsImages, a.Platform)
	}

	free := decodeAs[apiSocialAccountList](e.get(keyFree, "/social/accounts").expect(http.StatusOK))
	assert.False(t, free.PublishingAllowed, "the free plan does not publish")
	assert.Equal(t, list.ConnectURL, free.ConnectURL)
	require.Len(t, free.Data, 1)
	assert.Equal(t, "instagram", free.Data[0].Platform)
	assert.NotEqual(t, list.Data[0].ID, free.Data[0].ID)
	assert.True(t, decodeAs[apiSocialAccountList](e.get(tokenOAuth, "/social/accounts").expect(http.StatusOK)).PublishingAllowed)
}

func TestPublishVideoNow(t *testing.T) {
	t.Parallel()
	e := start(t)
	acct := e.socialAccounts(keyAll)
	caption := "Cold brew season is here ☕ #coldbrew #coffee"
	p := e.publish(keyAll, map[string]any{"asset_ids": []int{acmeVideo}, "caption": caption, "platforms": []string{"tiktok", "youtube", "instagram"},
		"options": map[string]any{"youtube_format": "short", "title": "Cold brew, slowly"}})
	assert.Positive(t, p.ID)
	assert.Equal(t, "publication", p.Object)
	assert.Equal(t, "publishing", p.Status)
	assert.Equal(t, caption, p.Caption)
	assert.Equal(t, []int64{acmeVideo}, p.AssetIDs)
	assert.Equal(t, "video", p.MediaType)
	assert.Equal(t, map[string]any{"youtube_format": "short", "title": "Cold brew, slowly"}, p.Options)
	assert.Empty(t, p.ScheduledAt)
	assert.Empty(t, p.PublishedAt)
	assert.Equal(t, e.now(), parseTime(t, p.CreatedAt))
	require.Len(t, p.Deliveries, 3)
	for i, platform := range []string{"tiktok", "youtube", "instagram"} {
		d := p.Deliveries[i]
		assert.Equal(t, platform, d.Platform, "one delivery per target, in order")
		assert.Equal(t, acct[platform].ID, d.SocialAccountID, "the platform's connected account")
		assert.Equal(t, acct[platform].Handle, d.Handle)
		assert.Equal(t, "publishing", d.Status)
		assert.Empty(t, d.PostURL)
	}
	assert.Equal(t, p, e.publication(keyAll, p.ID))

	e.advance(time.Minute)
	p = e.publication(keyAll, p.ID)
	assert.Equal(t, "published", p.Status)
	published := parseTime(t, p.PublishedAt)
	for _, d := range p.Deliveries {
		assert.Equal(t, "published", d.Status, d.Platform)
		assert.Nil(t, d.Error)
		u, err := url.Parse(d.PostURL)
		require.NoError(t, err, d.Platform)
		assert.Equal(t, "https", u.Scheme, d.PostURL)
		assert.Contains(t, u.Host, d.Platform, "a post of the platform: %s", d.PostURL)
		assert.False(t, parseTime(t, d.PublishedAt).After(published), "the publication is published with its last delivery")
	}
	// The read-only and OAuth tokens read it too.
	assert.Equal(t, p, e.publication(keyRead, p.ID))
	assert.Equal(t, p, e.publication(tokenOAuth, p.ID))
}

func TestPublishScheduledCarousel(t *testing.T) {
	t.Parallel()
	e := start(t)
	acct := e.socialAccounts(keyAll)
	at := e.now().Add(2 * time.Hour)
	// The OAuth scheduler app has the publish scope.
	p := e.publish(tokenOAuth, map[string]any{"asset_ids": []int{acmeImage1, acmeUpload, acmeImage3}, "caption": "Three ways to brew",
		"social_account_ids": []int64{acct["instagram"].ID, acct["linkedin"].ID}, "scheduled_at": at.Format(time.RFC3339)})
	assert.Equal(t, "scheduled", p.Status)
	assert.Equal(t, "carousel", p.MediaType)
	assert.Equal(t, []int64{acmeImage1, acmeUpload, acmeImage3}, p.AssetIDs, "in the order sent")
	assert.Equal(t, at, parseTime(t, p.ScheduledAt))
	require.Len(t, p.Deliveries, 2)
	for _, d := range p.Deliveries {
		assert.Equal(t, "scheduled", d.Status)
	}
	assert.Equal(t, "instagram", p.Deliveries[0].Platform)
	assert.Equal(t, "linkedin", p.Deliveries[1].Platform)

	e.advance(2*time.Hour - time.Second)
	assert.Equal(t, "scheduled", e.publication(keyAll, p.ID).Status, "not before its time")
	e.advance(time.Second)
	p = e.publication(keyAll, p.ID)
	assert.Equal(t, "publishing", p.Status, "at its time")
	for _, d := range p.Deliveries {
		assert.Equal(t, "publishing", d.Status)
	}
	e.advance(time.Minute)
	p = e.publication(keyAll, p.ID)
	assert.Equal(t, "published", p.Status)
	assert.True(t, parseTime(t, p.PublishedAt).After(at))
	for _, d := range p.Deliveries {
		assert.Equal(t, "published", d.Status)
		assert.NotEmpty(t, d.PostURL)
	}

	// A scheduled_at with another offset is the same instant.
	local := e.now().Add(time.Hour).In(time.FixedZone("CET", 3600))
	p = e.publish(keyAll, map[string]any{"asset_ids": []int{acmeImage2}, "caption": "offset", "platforms": []string{"linkedin"}, "scheduled_at": local.Format(time.RFC3339)})
	assert.True(t, local.Equal(parseTime(t, p.ScheduledAt)), "scheduled_at is shown in UTC")
	// A single image is a carousel of one.
	assert.Equal(t, "carousel", p.MediaType)
}

func TestPublishPartialAndTotalFailure(t *testing.T) {
	t.Parallel()
	e := start(t)
	tests := []struct {
		caption   string
		platforms []string
		status    string
		failed    []string
	}{
		{"Latte art [mock:fail-platform=instagram]", []string{"instagram", "linkedin"}, "partially_published", []string{"instagram"}},
		{"Latte art [mock:fail-platform=all]", []string{"instagram", "linkedin"}, "failed", []string{"instagram", "linkedin"}},
		{"[mock:fail-platform=instagram] [mock:fail-platform=linkedin]", []string{"instagram", "linkedin"}, "failed", []string{"instagram", "linkedin"}},
		{"[mock:fail-platform=tiktok] does not concern these", []string{"instagram", "linkedin"}, "published", nil},
	}
	for _, tt := range tests {
		t.Run(tt.caption, func(t *testing.T) {
			e := e.sub(t)
			p := e.publish(keyAll, map[string]any{"asset_ids": []int{acmeImage1}, "caption": tt.caption, "platforms": tt.platforms})
			assert.Equal(t, "publishing", p.Status)
			assert.Equal(t, tt.caption, p.Caption, "stored as sent")
			e.advance(time.Minute)
			p = e.publication(keyAll, p.ID)
			assert.Equal(t, tt.status, p.Status)
			for _, d := range p.Deliveries {
				if slicesContains(tt.failed, d.Platform) {
					assert.Equal(t, "failed", d.Status, d.Platform)
					require.NotNil(t, d.Error, d.Platform)
					assert.NotEmpty(t, d.Error.Code)
					assert.NotEmpty(t, d.Error.Message)
					assert.Empty(t, d.PostURL)
				} else {
					assert.Equal(t, "published", d.Status, d.Platform)
					assert.NotEmpty(t, d.PostURL)
					assert.Nil(t, d.Error)
				}
			}
			if tt.status == "failed" {
				assert.Empty(t, p.PublishedAt, "nothing was published")
			} else {
				assert.NotEmpty(t, p.PublishedAt)
			}
		})
	}
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestPublishNotAllowedOnFreePlan(t *testing.T) {
	t.Parallel()
	e := start(t)
	img := decodeAs[apiList[apiAsset]](e.get(keyFree, "/assets?kind=image&limit=1").expect(http.StatusOK)).Data[0].ID
	res := e.post(keyFree, "/social/publications", map[string]any{"asset_ids": []int64{img}, "caption": "hello", "platforms": []string{"instagram"}}).
		expect(http.StatusForbidden, "publishing_not_allowed")
	assert.Equal(t, "free", res.errorDetails()["plan"])
	// Before anything else is checked: the assets and targets here are wrong too.
	e.post(keyFree, "/social/publications", map[string]any{"asset_ids": []int{999999}, "caption": "hello", "platforms": []string{"tiktok"}}).
		expect(http.StatusForbidden, "publishing_not_allowed")
	e.post(keyFree, "/social/publications", map[string]any{"asset_ids": []int64{img}, "caption": "later", "social_account_ids": []int{6},
		"scheduled_at": "2030-01-01T00:00:00Z"}).expect(http.StatusForbidden, "publishing_not_allowed")
	assert.Empty(t, decodeAs[apiList[apiPublication]](e.get(keyFree, "/social/publications").expect(http.StatusOK)).Data, "nothing was created")
}

func TestPublishViolations(t *testing.T) {
	t.Parallel()
	e := start(t)
	acct := e.socialAccounts(keyAll)
	pending := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:stuck]"}).Assets[0].ID
	failed := e.generate(keyAll, map[string]any{"modality": "video", "model_id": "sora-2", "prompt": "[mock:fail-queued]"}).Assets[0].ID
	model3d := e.generate(keyAll, map[string]any{"modality": "3d", "model_id": "meshy-5", "prompt": "a cup"}).Assets[0].ID
	e.advance(time.Hour)
	foreignAsset := decodeAs[apiList[apiAsset]](e.get(keyFree, "/assets?kind=image&limit=1").expect(http.StatusOK)).Data[0].ID
	foreignAccount := decodeAs[apiSocialAccountList](e.get(keyFree, "/social/accounts").expect(http.StatusOK)).Data[0].ID
	past := e.now().Add(-time.Minute).Format(time.RFC3339)
	now := e.now().Format(time.RFC3339)

	img := []int{acmeImage1}
	ok := func(extra ...any) map[string]any {
		b := map[string]any{"asset_ids": img, "caption": "hi", "platforms": []string{"instagram"}}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == nil {
				delete(b, extra[i].(string))
				continue
			}
			b[extra[i].(string)] = extra[i+1]
		}
		return b
	}
	ids11 := []int{1, 3, 4, 9, 12, 14, 15, 16, 17, 18, 19}
	tests := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"asset not found", ok("asset_ids", []int{999999}), []string{"asset_ids[0]"}},
		{"asset of another workspace", ok("asset_ids", []int64{acmeImage1, foreignAsset}), []string{"asset_ids[1]"}},
		{"asset not completed", ok("asset_ids", []int64{pending}), []string{"asset_ids[0]"}},
		{"asset failed", ok("asset_ids", []int64{failed}, "platforms", []string{"tiktok"}), []string{"asset_ids[0]"}},
		{"an audio asset", ok("asset_ids", []int{acmeVoice}), []string{"asset_ids[0]"}},
		{"a 3d asset", ok("asset_ids", []int64{model3d}), []string{"asset_ids[0]"}},
		{"images and a video", ok("asset_ids", []int{acmeImage1, acmeVideo}), []string{"asset_ids"}},
		{"two videos", ok("asset_ids", []int{acmeVideo, acmeVideo2}, "platforms", []string{"tiktok"}), []string{"asset_ids"}},
		{"account not publishable", ok("social_account_ids", []int64{acct["x"].ID}, "platforms", nil), []string{"social_account_ids[0]"}},
		{"platform not publishable", ok("platforms", []string{"instagram", "x"}), []string{"platforms[1]"}},
		{"images to tiktok", ok("social_account_ids", []int64{acct["tiktok"].ID}, "platforms", nil), []string{"social_account_ids[0]"}},
		{"images to youtube", ok("platforms", []string{"youtube"}), []string{"platforms[0]"}},
		{"unknown social account", ok("social_account_ids", []int64{acct["instagram"].ID, 999}, "platforms", nil), []string{"social_account_ids[1]"}},
		{"social account of another workspace", ok("social_account_ids", []int64{foreignAccount}, "platforms", nil), []string{"social_account_ids[0]"}},
		{"platform without a connected account", ok("platforms", []string{"facebook"}), []string{"platforms[0]"}},
		{"scheduled in the past", ok("scheduled_at", past), []string{"scheduled_at"}},
		{"scheduled now", ok("scheduled_at", now), []string{"scheduled_at"}},
		{"scheduled_at not a date-time", ok("scheduled_at", "tomorrow"), []string{"scheduled_at"}},
		{"unknown option", ok("options", map[string]any{"tiktok_sound": "on"}), []string{"options.tiktok_sound"}},
		{"youtube_format outside short and video", ok("options", map[string]any{"youtube_format": "long"}), []string{"options.youtube_format"}},
		{"title of 101 characters", ok("options", map[string]any{"title": strings.Repeat("t", 101)}), []string{"options.title"}},
		{"caption of 2201 characters", ok("caption", strings.Repeat("#", 2201)), []string{"caption"}},
		{"11 asset ids", ok("asset_ids", ids11), []string{"asset_ids"}},
		{"no asset ids", ok("asset_ids", []int{}), []string{"asset_ids"}},
		{"the same asset twice", ok("asset_ids", []int{1, 1}), []string{"asset_ids"}},
		{"missing caption", ok("caption", nil), []string{"caption"}},
		{"unknown field", ok("hashtags", []string{"#x"}), []string{"hashtags"}},
		{"platform outside the enum", ok("platforms", []string{"myspace"}), []string{"platforms[0]"}},
		{"several problems at once", ok("asset_ids", []int{acmeVoice, 999999}, "platforms", []string{"x", "facebook"}, "scheduled_at", past),
			[]string{"asset_ids[0]", "asset_ids[1]", "platforms[0]", "platforms[1]", "scheduled_at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			e.post(keyAll, "/social/publications", tt.body).expectInvalid(tt.fields...)
		})
	}
	for _, tt := range []struct {
		name string
		body map[string]any
	}{
		{"both social_account_ids and platforms", ok("social_account_ids", []int64{acct["instagram"].ID})},
		{"neither social_account_ids nor platforms", ok("platforms", nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			res := e.post(keyAll, "/social/publications", tt.body).expect(http.StatusBadRequest, "validation_failed")
			require.Len(t, res.Violations(), 1, "%s", res.Body)
			assert.Contains(t, res.Violations()[0].Reason, "exactly one")
		})
	}
	assert.Empty(t, decodeAs[apiList[apiPublication]](e.get(keyAll, "/social/publications").expect(http.StatusOK)).Data, "nothing was created")

	// The limits themselves are accepted: 10 images, a caption of 2200, a title of 100.
	// Acme Studio's eight completed images and two uploads.
	ten := []int{1, 3, 4, 9, 12, 14, 15, 16}
	ten = append(ten, int(e.uploadPNG(keyAll, 2, 2, "a").ID), int(e.uploadPNG(keyAll, 2, 2, "b").ID))
	p := e.publish(keyAll, map[string]any{"asset_ids": ten, "caption": strings.Repeat("#", 2200), "platforms": []string{"linkedin"},
		"options": map[string]any{"title": strings.Repeat("t", 100), "youtube_format": "video"}})
	assert.Len(t, p.AssetIDs, 10)
	assert.Equal(t, "carousel", p.MediaType)
}

func TestListPublications(t *testing.T) {
	t.Parallel()
	e := start(t)
	later := func(d time.Duration) string { return e.now().Add(d).Format(time.RFC3339) }
	var made []apiPublication
	publish := func(body map[string]any) {
		made = append(made, e.publish(keyAll, body))
	}
	publish(map[string]any{"asset_ids": []int{acmeImage1}, "caption": "one", "platforms": []string{"instagram"}})
	publish(map[string]any{"asset_ids": []int{acmeVideo}, "caption": "two [mock:fail-platform=all]", "platforms": []string{"tiktok"}})
	publish(map[string]any{"asset_ids": []int{acmeImage2}, "caption": "three [mock:fail-platform=linkedin]", "platforms": []string{"instagram", "linkedin"}})
	e.advance(time.Minute)
	publish(map[string]any{"asset_ids": []int{acmeImage3}, "caption": "four", "platforms": []string{"linkedin"}, "scheduled_at": later(24 * time.Hour)})
	publish(map[string]any{"asset_ids": []int{acmeVideo2}, "caption": "five", "platforms": []string{"youtube"}})
	publish(map[string]any{"asset_ids": []int{acmeUpload}, "caption": "six", "platforms": []string{"instagram"}, "scheduled_at": later(48 * time.Hour)})

	all, _ := pages[apiPublication](e, keyAll, "/social/publications", 50)
	require.Len(t, all, 6)
	for i, p := range all {
		assert.Equal(t, made[len(made)-1-i].ID, p.ID, "newest first")
	}
	statuses := map[string][]int64{}
	for _, p := range all {
		statuses[p.Status] = append(statuses[p.Status], p.ID)
	}
	assert.Len(t, statuses["published"], 1)
	assert.Len(t, statuses["failed"], 1)
	assert.Len(t, statuses["partially_published"], 1)
	assert.Len(t, statuses["scheduled"], 2)
	assert.Len(t, statuses["publishing"], 1)

	for _, status := range []string{"draft", "ready", "scheduled", "publishing", "published", "partially_published", "failed", "cancelled"} {
		t.Run("status="+status, func(t *testing.T) {
			e := e.sub(t)
			got, _ := pages[apiPublication](e, keyAll, "/social/publications?status="+status, 1)
			var gotIDs []int64
			for _, p := range got {
				assert.Equal(t, status, p.Status)
				gotIDs = append(gotIDs, p.ID)
			}
			assert.Equal(t, statuses[status], gotIDs)
		})
	}
	for _, limit := range []int{1, 2, 4, 6} {
		got, n := pages[apiPublication](e, keyAll, "/social/publications", limit)
		assert.Equal(t, all, got, "limit %d", limit)
		assert.Equal(t, (6+limit-1)/limit, n)
	}
	// The status filter follows the lifecycle.
	e.advance(48*time.Hour + time.Minute)
	got, _ := pages[apiPublication](e, keyAll, "/social/publications?status=scheduled", 50)
	assert.Empty(t, got)
	got, _ = pages[apiPublication](e, keyAll, "/social/publications?status=published", 50)
	assert.Len(t, got, 4)

	// Each workspace lists its own.
	assert.Empty(t, decodeAs[apiList[apiPublication]](e.get(keyBusiness, "/social/publications").expect(http.StatusOK)).Data)

	res := e.get(keyAll, "/social/publications?status=sent").expectInvalid("status")
	assert.Equal(t, []any{"draft", "ready", "scheduled", "publishing", "published", "partially_published", "failed", "cancelled"}, violation(t, res, "status").Allowed)
	e.get(keyAll, "/social/publications?limit=0").expectInvalid("limit")
	e.get(keyAll, "/social/publications?limit=51").expectInvalid("limit")
}

func TestGetPublicationNotFound(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := e.publish(keyAll, map[string]any{"asset_ids": []int{acmeImage1}, "caption": "mine", "platforms": []string{"instagram"}})
	e.get(keyAll, fmt.Sprintf("/social/publications/%d", p.ID)).expect(http.StatusOK)
	e.get(keyAll, "/social/publications/999999").expect(http.StatusNotFound, "not_found")
	e.get(keyBusiness, fmt.Sprintf("/social/publications/%d", p.ID)).expect(http.StatusNotFound, "not_found")
	e.get(keyFree, fmt.Sprintf("/social/publications/%d", p.ID)).expect(http.StatusNotFound, "not_found")
	e.get(keyAll, "/social/publications/0").expectInvalid("id")
	e.get(keyAll, "/social/publications/first").expectInvalid("id")
}
