package contract_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/testkit"
)

type apiEffect struct {
	Slug            string `json:"slug"`
	Object          string `json:"object"`
	Name            string `json:"name"`
	Tagline         string `json:"tagline"`
	Credits         int64  `json:"credits"`
	DurationSeconds int    `json:"duration_seconds"`
	AspectRatio     string `json:"aspect_ratio"`
	AppURL          string `json:"app_url"`
}

// createEncore posts a creation and expects 201.
func (e *env) createEncore(token string, body map[string]any) apiEncore {
	e.t.Helper()
	return decodeAs[apiEncore](e.post(token, "/encore/creations", body).expect(http.StatusCreated))
}

func (e *env) encore(token string, id int64) apiEncore {
	e.t.Helper()
	return decodeAs[apiEncore](e.get(token, fmt.Sprintf("/encore/creations/%d", id)).expect(http.StatusOK))
}

func (e *env) effects() map[string]apiEffect {
	e.t.Helper()
	out := map[string]apiEffect{}
	for _, f := range decodeAs[apiList[apiEffect]](e.get(keyRead, "/encore/effects").expect(http.StatusOK)).Data {
		out[f.Slug] = f
	}
	return out
}

func TestListEncoreEffects(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	list := decodeAs[apiList[apiEffect]](e.get(keyRead, "/encore/effects").expect(http.StatusOK))
	assert.Equal(t, "list", list.Object)
	assert.False(t, list.HasMore)
	assert.Nil(t, list.NextCursor)
	require.NotEmpty(t, list.Data)
	slugs := map[string]bool{}
	for _, f := range list.Data {
		assert.False(t, slugs[f.Slug], "slugs are unique")
		slugs[f.Slug] = true
		assert.Regexp(t, `^[a-z0-9-]+$`, f.Slug)
		assert.Equal(t, "encore_effect", f.Object)
		assert.NotEmpty(t, f.Name)
		assert.NotEmpty(t, f.Tagline)
		assert.Positive(t, f.Credits)
		assert.GreaterOrEqual(t, f.DurationSeconds, 5)
		assert.LessOrEqual(t, f.DurationSeconds, 8)
		assert.Equal(t, "9:16", f.AspectRatio)
		u, err := url.Parse(f.AppURL)
		require.NoError(t, err)
		assert.True(t, u.IsAbs(), f.AppURL)
	}
	assert.True(t, slugs["golden-hour"])
	// Every workspace sees the same catalog.
	assert.Equal(t, list, decodeAs[apiList[apiEffect]](e.get(keyBroke, "/encore/effects").expect(http.StatusOK)))
}

func TestCreateEncoreFromEachSource(t *testing.T) {
	t.Parallel()
	e := start(t)
	effects := e.effects()
	photo := e.uploadPNG(keyAll, 600, 800, "portrait.png")
	characters := decodeAs[apiList[apiCharacter]](e.get(keyAll, "/characters").expect(http.StatusOK)).Data
	require.NotEmpty(t, characters)

	tests := []struct {
		name   string
		effect string
		source map[string]any
	}{
		{"asset_id", "golden-hour", map[string]any{"asset_id": photo.ID}},
		{"character_id", "disco-spin", map[string]any{"character_id": characters[0].ID}},
		{"image_url", "zoom-to-space", map[string]any{"image_url": testkit.DataURI("image/png", testkit.PNG(t, 480, 720))}},
		{"a fixture upload", "anime-me", map[string]any{"asset_id": 3}},
		{"a generated image", "snow-globe", map[string]any{"asset_id": 1}},
	}
	balance := e.balance(keyAll)
	created := make([]apiEncore, len(tests))
	for i, tt := range tests {
		body := map[string]any{"effect": tt.effect}
		for k, v := range tt.source {
			body[k] = v
		}
		c := e.createEncore(keyAll, body)
		f := effects[tt.effect]
		assert.Positive(t, c.ID, tt.name)
		assert.Equal(t, "encore_creation", c.Object)
		assert.Equal(t, tt.effect, c.Effect)
		assert.Contains(t, []string{"queued", "processing"}, c.Status)
		assert.Positive(t, c.AssetID)
		assert.NotEmpty(t, c.StartFrameURL)
		assert.Nil(t, c.Video, "no video before completion")
		assert.Empty(t, c.ShareURL)
		assert.Equal(t, f.Credits, c.Credits)
		require.NotNil(t, c.CreditsCharged)
		assert.Equal(t, f.Credits, *c.CreditsCharged, "the effect's credits")
		balance -= f.Credits
		require.NotNil(t, c.CreditsBalance)
		assert.Equal(t, balance, *c.CreditsBalance)
		assert.Equal(t, e.now(), parseTime(t, c.CreatedAt))
		created[i] = c
	}
	assert.Equal(t, balance, e.balance(keyAll))

	// The first three run at once; the other two wait for a slot.
	e.advance(30 * time.Minute)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			c := e.encore(keyAll, created[i].ID)
			f := effects[tt.effect]
			assert.Equal(t, "completed", c.Status)
			assert.Equal(t, created[i].AssetID, c.AssetID)
			assert.Nil(t, c.CreditsCharged, "only the create response has credits_charged")
			assert.NotEmpty(t, c.ShareURL)
			u, err := url.Parse(c.ShareURL)
			require.NoError(t, err)
			assert.True(t, u.IsAbs())
			require.NotNil(t, c.Video)
			v := c.Video
			assert.Equal(t, c.AssetID, v.ID, "the video is the creation's library asset")
			assert.Equal(t, "asset", v.Object)
			assert.Equal(t, "video", v.Kind)
			assert.Equal(t, "completed", v.Status)
			assert.Equal(t, "video/mp4", v.MimeType)
			assert.Equal(t, f.DurationSeconds, v.DurationSeconds, "the effect's length")
			assert.Equal(t, 720, v.Width, "vertical 9:16")
			assert.Equal(t, 1280, v.Height)
			assert.NotEmpty(t, v.URL)

			// The video is an asset of the library, readable as a generation.
			g := e.generation(keyAll, c.AssetID)
			assert.Equal(t, "completed", g.Status)
			require.Len(t, g.Assets, 1)
			a := g.Assets[0]
			assert.Equal(t, "video", a.Kind)
			assert.Equal(t, v.URL, a.URL)
			assert.Equal(t, f.Credits, a.Credits)
			assert.Equal(t, 720, a.Width)
			assert.Equal(t, 1280, a.Height)
			assert.Equal(t, f.DurationSeconds, a.DurationSeconds)
		})
	}
	videos, _ := pages[apiAsset](e, keyAll, "/assets?kind=video", 50)
	for _, c := range created {
		assert.Contains(t, ids(videos), c.AssetID, "the video is listed in /assets")
	}

	// The files: the video and the start frame.
	c := e.encore(keyAll, created[0].ID)
	res := e.fetch(c.Video.URL).expect(http.StatusOK)
	assert.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	assert.Equal(t, "ftyp", string(res.Body[4:8]))
	res = e.fetch(c.StartFrameURL).expect(http.StatusOK)
	assert.Equal(t, "image/jpeg", res.Header.Get("Content-Type"))
	assert.True(t, bytes.HasPrefix(res.Body, []byte{0xFF, 0xD8, 0xFF}), "a JPEG")
}

func TestEncoreLifecycleAndWait(t *testing.T) {
	t.Parallel()
	e := start(t, virtualClock)
	photo := e.uploadPNG(keyAll, 480, 480, "square.png")
	c := e.createEncore(keyAll, map[string]any{"effect": "golden-hour", "asset_id": photo.ID})
	assert.Equal(t, "queued", c.Status, "in the provider's queue")
	assert.Equal(t, "queued", e.generation(keyAll, c.AssetID).Status, "the video asset follows the creation")

	// golden-hour: about 5 s queued, then about 45 s processing.
	e.advance(7 * time.Second)
	c = e.encore(keyAll, c.ID)
	assert.Equal(t, "processing", c.Status)
	assert.Nil(t, c.Video)
	assert.Equal(t, "processing", e.generation(keyAll, c.AssetID).Status)

	// A long poll on the virtual clock: the state at the end of the wait.
	c = decodeAs[apiEncore](e.get(keyAll, fmt.Sprintf("/encore/creations/%d?wait_seconds=55", c.ID)).expect(http.StatusOK))
	assert.Equal(t, "completed", c.Status)
	require.NotNil(t, c.Video)
	assert.NotEmpty(t, c.ShareURL)

	// The create response itself can wait.
	fast := e.uploadPNG(keyAll, 500, 900, "[mock:delay=10] quick render")
	c = e.createEncore(keyAll, map[string]any{"effect": "disco-spin", "asset_id": fast.ID, "wait_seconds": 30})
	assert.Equal(t, "completed", c.Status)
	require.NotNil(t, c.Video)
	assert.Equal(t, 6, c.Video.DurationSeconds)
	require.NotNil(t, c.CreditsCharged)
	assert.Equal(t, int64(20), *c.CreditsCharged)
}

func TestCreateEncoreViolations(t *testing.T) {
	t.Parallel()
	e := start(t)
	small := e.uploadPNG(keyAll, 479, 1000, "too narrow")
	ok := e.uploadPNG(keyAll, 480, 480, "just right")
	pending := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:stuck]"}).Assets[0].ID
	failed := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:fail-queued]"}).Assets[0].ID
	e.advance(time.Minute)
	foreignAsset := decodeAs[apiList[apiAsset]](e.get(keyFree, "/assets?kind=image&limit=1").expect(http.StatusOK)).Data[0].ID
	foreignCharacter := decodeAs[apiList[apiCharacter]](e.get(keyFree, "/characters").expect(http.StatusOK)).Data[0].ID
	// Acme Studio's character still in training: the one id of the workspace that /characters does not list.
	listed := map[int64]bool{}
	for _, c := range decodeAs[apiList[apiCharacter]](e.get(keyAll, "/characters").expect(http.StatusOK)).Data {
		listed[c.ID] = true
	}
	var training int64
	for id := int64(1); id <= 4; id++ {
		if !listed[id] {
			training = id
		}
	}
	require.NotZero(t, training)
	balance := e.balance(keyAll)

	png := func(w, h int) string { return testkit.DataURI("image/png", testkit.PNG(t, w, h)) }
	tests := []struct {
		name    string
		body    map[string]any
		fields  []string
		allowed []any
	}{
		{"unknown effect", map[string]any{"effect": "moonwalk", "asset_id": ok.ID}, []string{"effect"},
			[]any{"golden-hour", "disco-spin", "snow-globe", "anime-me", "zoom-to-space"}},
		{"asset not found", map[string]any{"effect": "golden-hour", "asset_id": 999999}, []string{"asset_id"}, nil},
		{"asset of another workspace", map[string]any{"effect": "golden-hour", "asset_id": foreignAsset}, []string{"asset_id"}, nil},
		{"asset not an image", map[string]any{"effect": "golden-hour", "asset_id": 2}, []string{"asset_id"}, nil},
		{"asset not completed", map[string]any{"effect": "golden-hour", "asset_id": pending}, []string{"asset_id"}, nil},
		{"asset failed", map[string]any{"effect": "golden-hour", "asset_id": failed}, []string{"asset_id"}, nil},
		{"asset too small", map[string]any{"effect": "golden-hour", "asset_id": small.ID}, []string{"asset_id"}, nil},
		{"character not ready", map[string]any{"effect": "golden-hour", "character_id": training}, []string{"character_id"}, nil},
		{"character unknown", map[string]any{"effect": "golden-hour", "character_id": 999}, []string{"character_id"}, nil},
		{"character of another workspace", map[string]any{"effect": "golden-hour", "character_id": foreignCharacter}, []string{"character_id"}, nil},
		{"image_url too small", map[string]any{"effect": "golden-hour", "image_url": png(640, 479)}, []string{"image_url"}, nil},
		{"image_url not an accepted type", map[string]any{"effect": "golden-hour", "image_url": testkit.DataURI("image/gif", gifImage(t, 8, 8))}, []string{"image_url"}, nil},
		{"image_url not a data URI of an image", map[string]any{"effect": "golden-hour", "image_url": "data:text/plain;base64,aGk="}, []string{"image_url"}, nil},
		{"unknown effect and a bad source", map[string]any{"effect": "moonwalk", "asset_id": small.ID}, []string{"effect", "asset_id"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			res := e.post(keyAll, "/encore/creations", tt.body).expectInvalid(tt.fields...)
			if tt.allowed != nil {
				assert.Equal(t, tt.allowed, violation(t, res, tt.fields[0]).Allowed)
			}
		})
	}
	sources := []struct {
		name string
		body map[string]any
	}{
		{"no source", map[string]any{"effect": "golden-hour"}},
		{"asset and character", map[string]any{"effect": "golden-hour", "asset_id": ok.ID, "character_id": 1}},
		{"all three sources", map[string]any{"effect": "golden-hour", "asset_id": ok.ID, "character_id": 1, "image_url": png(600, 600)}},
	}
	for _, tt := range sources {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			res := e.post(keyAll, "/encore/creations", tt.body).expect(http.StatusBadRequest, "validation_failed")
			require.Len(t, res.Violations(), 1, "%s", res.Body)
			assert.Contains(t, res.Violations()[0].Reason, "exactly one")
		})
	}
	t.Run("schema", func(t *testing.T) {
		e := e.sub(t)
		e.post(keyAll, "/encore/creations", map[string]any{"asset_id": ok.ID}).expectInvalid("effect")
		e.post(keyAll, "/encore/creations", map[string]any{"effect": "golden-hour", "asset_id": 0}).expectInvalid("asset_id")
		e.post(keyAll, "/encore/creations", map[string]any{"effect": "golden-hour", "asset_id": ok.ID, "wait_seconds": 56}).expectInvalid("wait_seconds")
		e.post(keyAll, "/encore/creations", map[string]any{"effect": "golden-hour", "image_url": "ftp://x/y.png"}).expectInvalid("image_url")
		e.post(keyAll, "/encore/creations", map[string]any{"effect": "golden-hour", "asset_id": ok.ID, "style": "x"}).expectInvalid("style")
	})
	assert.Equal(t, balance, e.balance(keyAll), "refused requests charge nothing")
}

func TestCreateEncoreInsufficientCredits(t *testing.T) {
	t.Parallel()
	e := start(t)
	photo := e.uploadPNG(keyBroke, 600, 800, "mine.png")
	res := e.post(keyBroke, "/encore/creations", map[string]any{"effect": "zoom-to-space", "asset_id": photo.ID}).expect(http.StatusPaymentRequired, "insufficient_credits")
	assert.Equal(t, float64(30), res.errorDetails()["required"])
	assert.Equal(t, float64(0), res.errorDetails()["balance"])
	res = e.post(keyBroke, "/encore/creations", map[string]any{"effect": "golden-hour", "image_url": testkit.DataURI("image/png", testkit.PNG(t, 480, 480))}).expect(http.StatusPaymentRequired, "insufficient_credits")
	assert.Equal(t, float64(15), res.errorDetails()["required"])
	// Nothing was created: the library holds only the upload.
	list := decodeAs[apiList[apiAsset]](e.get(keyBroke, "/assets").expect(http.StatusOK))
	assert.Equal(t, []int64{photo.ID}, ids(list.Data))
	assert.Zero(t, e.balance(keyBroke))
}

func TestEncoreFailureRefunds(t *testing.T) {
	t.Parallel()
	e := start(t)
	// Markers in the title of the source asset make the creation fail.
	tests := []struct{ title, code string }{
		{"[mock:fail]", "provider_error"},
		{"selfie [mock:fail-code=content_policy]", "content_policy"},
		{"[mock:fail-queued]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			e := e.sub(t)
			photo := e.uploadPNG(keyAll, 600, 800, tt.title)
			assert.Equal(t, tt.title, photo.Title, "the title is stored as sent")
			before := e.balance(keyAll)
			c := e.createEncore(keyAll, map[string]any{"effect": "snow-globe", "asset_id": photo.ID})
			assert.Equal(t, int64(20), *c.CreditsCharged)
			assert.Equal(t, before-20, e.balance(keyAll))
			e.advance(10 * time.Minute)
			c = e.encore(keyAll, c.ID)
			assert.Equal(t, "failed", c.Status)
			require.NotNil(t, c.Error)
			assert.NotEmpty(t, c.Error.Message)
			if tt.code != "" {
				assert.Equal(t, tt.code, c.Error.Code)
			}
			assert.Zero(t, c.Credits, "refunded")
			assert.Nil(t, c.Video)
			assert.Empty(t, c.ShareURL)
			assert.Equal(t, before, e.balance(keyAll), "the effect's credits come back")
			g := e.generation(keyAll, c.AssetID)
			assert.Equal(t, "failed", g.Status)
			assert.Zero(t, g.Assets[0].Credits)
			assert.Empty(t, g.Assets[0].URL)
			require.NotNil(t, g.Assets[0].Error)
		})
	}
}

func TestEncoreConcurrencyLimit(t *testing.T) {
	t.Parallel()
	e := start(t)
	// Every creation renders in exactly 20 s, without a provider queue.
	photo := e.uploadPNG(keyAll, 600, 800, "[mock:delay=20]")
	var cs []apiEncore
	for _, effect := range []string{"golden-hour", "disco-spin", "snow-globe", "anime-me", "zoom-to-space"} {
		cs = append(cs, e.createEncore(keyAll, map[string]any{"effect": effect, "asset_id": photo.ID}))
	}
	status := func() []string {
		var out []string
		for _, c := range cs {
			out = append(out, e.encore(keyAll, c.ID).Status)
		}
		return out
	}
	assert.Equal(t, []string{"processing", "processing", "processing", "queued", "queued"}, status(), "three at a time per workspace")
	// Another workspace has its own slots.
	other := e.uploadPNG(keyBusiness, 600, 800, "[mock:delay=20]")
	assert.Equal(t, "processing", e.createEncore(keyBusiness, map[string]any{"effect": "golden-hour", "asset_id": other.ID}).Status)
	// All of them were charged at creation.
	assert.Equal(t, int64(5000-15-20-20-25-30), e.balance(keyAll))

	e.advance(19 * time.Second)
	assert.Equal(t, []string{"processing", "processing", "processing", "queued", "queued"}, status())
	e.advance(time.Second)
	assert.Equal(t, []string{"completed", "completed", "completed", "processing", "processing"}, status(), "the queued ones start in order as slots free")
	e.advance(20 * time.Second)
	assert.Equal(t, []string{"completed", "completed", "completed", "completed", "completed"}, status())
}

func TestGetEncoreCreationNotFound(t *testing.T) {
	t.Parallel()
	e := start(t)
	c := e.createEncore(keyAll, map[string]any{"effect": "golden-hour", "character_id": 1})
	e.get(keyAll, fmt.Sprintf("/encore/creations/%d", c.ID)).expect(http.StatusOK)
	e.get(keyAll, "/encore/creations/999999").expect(http.StatusNotFound, "not_found")
	e.get(keyFree, fmt.Sprintf("/encore/creations/%d", c.ID)).expect(http.StatusNotFound, "not_found")
	e.get(keyRead, fmt.Sprintf("/encore/creations/%d", c.ID)).expect(http.StatusOK)
	e.get(keyAll, "/encore/creations/0").expectInvalid("id")
	e.get(keyAll, "/encore/creations/abc").expectInvalid("id")
	e.get(keyAll, fmt.Sprintf("/encore/creations/%d?wait_seconds=-1", c.ID)).expectInvalid("wait_seconds")
}
