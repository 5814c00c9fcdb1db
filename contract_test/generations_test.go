package contract_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/testkit"
)

// settle moves the clock far enough for every ordinary job to end.
const settle = 30 * time.Minute

func TestCreateGenerationImageCounts(t *testing.T) {
	t.Parallel()
	e := start(t)
	balance := e.balance(keyAll)
	for count := 1; count <= 4; count++ {
		t.Run(fmt.Sprintf("count %d", count), func(t *testing.T) {
			e := e.sub(t)
			g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "A neon sign that says OPEN", "count": count})
			assert.Equal(t, "generation", g.Object)
			assert.Contains(t, []string{"queued", "processing"}, g.Status)
			require.Len(t, g.Assets, count, "one asset per output")
			assert.Equal(t, int64(6*count), g.CreditsCharged, "credits_per_output x outputs")
			balance -= int64(6 * count)
			assert.Equal(t, balance, g.CreditsBalance, "the new balance")
			assert.False(t, g.CoveredByGift)
			seen := map[int64]bool{}
			for _, a := range g.Assets {
				assert.False(t, seen[a.ID], "distinct assets")
				seen[a.ID] = true
				assert.Equal(t, "asset", a.Object)
				assert.Equal(t, "image", a.Kind)
				assert.Equal(t, g.Status, a.Status)
				assert.Equal(t, "imagen-4", a.Model)
				assert.Equal(t, "A neon sign that says OPEN", a.Prompt)
				assert.Equal(t, int64(6), a.Credits, "credits of each output")
				assert.Empty(t, a.URL, "no file before completion")
				assert.Empty(t, a.DownloadURL)
				assert.Zero(t, a.Width)
				assert.Equal(t, e.now(), parseTime(t, a.CreatedAt))
			}
			// The read of any of its assets returns the whole generation.
			for _, a := range g.Assets {
				assert.ElementsMatch(t, ids(g.Assets), ids(e.generation(keyAll, a.ID).Assets))
			}
		})
	}
	assert.Equal(t, balance, e.balance(keyAll), "GET /account agrees")
}

func TestCreateGenerationEachModality(t *testing.T) {
	t.Parallel()
	e := start(t)
	png := testkit.DataURI("image/png", testkit.PNG(t, 64, 48))
	tests := []struct {
		name     string
		body     map[string]any
		credits  int64
		kind     string
		mime     string
		check    func(t *testing.T, a apiAsset)
		fileType string
	}{
		{"image with aspect and resolution", map[string]any{"modality": "image", "model_id": "seedream-4", "prompt": "a red fox in the snow", "aspect_ratio": "16:9", "resolution": "2k"},
			4, "image", "image/jpeg", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 2048, a.Width, "the longer side of 2k")
				assert.Equal(t, 1152, a.Height)
			}, ""},
		{"image defaults", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a lighthouse"},
			6, "image", "image/png", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 1024, a.Width, "default 1:1 at 1k")
				assert.Equal(t, 1024, a.Height)
			}, "image/png"},
		{"video", map[string]any{"modality": "video", "model_id": "veo-3-fast", "prompt": "waves at dusk", "duration": 6, "aspect_ratio": "9:16", "resolution": "1080p", "generate_audio": true},
			40, "video", "video/mp4", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 1080, a.Width, "the shorter side of 1080p")
				assert.Equal(t, 1920, a.Height)
				assert.Equal(t, 6, a.DurationSeconds)
			}, "video/mp4"},
		{"video without audio", map[string]any{"modality": "video", "model_id": "kling-2.5-turbo", "prompt": "a city timelapse", "duration": 10, "aspect_ratio": "1:1", "generate_audio": false},
			30, "video", "video/mp4", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 720, a.Width)
				assert.Equal(t, 720, a.Height)
				assert.Equal(t, 10, a.DurationSeconds)
			}, ""},
		{"image to video", map[string]any{"modality": "video", "model_id": "kling-2.5-i2v", "prompt": "animate it", "reference_image_urls": []string{png}},
			35, "video", "video/mp4", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 1280, a.Width, "default 16:9 at 720p")
				assert.Equal(t, 720, a.Height)
				assert.Equal(t, 5, a.DurationSeconds, "default duration")
			}, ""},
		{"voice", map[string]any{"modality": "audio", "track": "voice", "model_id": "eleven-multilingual-v2", "prompt": "Ciao a tutti, benvenuti nel nostro nuovo negozio di caffè.", "voice": "noah", "language": "it"},
			3, "voice", "audio/wav", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 4, a.DurationSeconds, "10 words at 150 words a minute")
				assert.Zero(t, a.Width)
			}, "audio/wav"},
		{"voice is the default track", map[string]any{"modality": "audio", "model_id": "eleven-multilingual-v2", "prompt": "Hello"},
			3, "voice", "audio/wav", nil, ""},
		{"music", map[string]any{"modality": "audio", "track": "music", "model_id": "suno-v4.5", "prompt": "lo-fi beats for a rainy cafe", "duration": 60},
			10, "music", "audio/wav", func(t *testing.T, a apiAsset) {
				t.Helper()
				assert.Equal(t, 60, a.DurationSeconds)
			}, ""},
		{"3d from a library image", map[string]any{"modality": "3d", "model_id": "trellis-2", "prompt": "a mug", "reference_asset_ids": []int{1}},
			20, "model3d", "model/gltf-binary", nil, "model/gltf-binary"},
		{"3d from a data URI", map[string]any{"modality": "3d", "model_id": "trellis-2", "prompt": "a mug", "reference_image_urls": []string{png}},
			20, "model3d", "model/gltf-binary", nil, ""},
		{"3d from four views", map[string]any{"modality": "3d", "model_id": "hunyuan3d-2.1", "prompt": "a chair", "reference_asset_ids": []int{1, 3, 12, 16}},
			25, "model3d", "model/gltf-binary", nil, ""},
		{"3d from text", map[string]any{"modality": "3d", "model_id": "meshy-5", "prompt": "a low-poly tree"},
			30, "model3d", "model/gltf-binary", nil, ""},
	}
	balance := e.balance(keyAll)
	created := make([]apiGeneration, len(tests))
	for i, tt := range tests {
		g := e.generate(keyAll, tt.body)
		require.Len(t, g.Assets, 1, tt.name)
		assert.Equal(t, tt.credits, g.CreditsCharged, tt.name)
		balance -= tt.credits
		assert.Equal(t, balance, g.CreditsBalance, tt.name)
		assert.Equal(t, tt.kind, g.Assets[0].Kind, tt.name)
		assert.Equal(t, tt.body["model_id"], g.Assets[0].Model)
		created[i] = g
	}
	assert.Equal(t, balance, e.balance(keyAll))

	e.advance(settle)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			g := e.generation(keyAll, created[i].Assets[0].ID)
			assert.Equal(t, "completed", g.Status)
			a := g.Assets[0]
			assert.Equal(t, "completed", a.Status)
			assert.Equal(t, tt.mime, a.MimeType)
			assert.Equal(t, tt.credits, a.Credits)
			assert.NotEmpty(t, a.URL)
			assert.NotEmpty(t, a.DownloadURL)
			if tt.check != nil {
				tt.check(t, a)
			}
			if tt.fileType != "" {
				res := e.fetch(a.URL).expect(http.StatusOK)
				assert.Equal(t, tt.fileType, res.Header.Get("Content-Type"))
				assert.NotEmpty(t, res.Body)
			}
		})
	}
}

func TestCreateGenerationMonthlyGift(t *testing.T) {
	t.Parallel()
	e := start(t)
	balance := e.balance(keyAll)
	// Acme Studio gets five flux-2-pro generations a month; a gift covers a whole generation.
	for i := 1; i <= 5; i++ {
		g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "gift", "count": 1 + i%4})
		assert.True(t, g.CoveredByGift, "generation %d", i)
		assert.Zero(t, g.CreditsCharged)
		assert.Equal(t, balance, g.CreditsBalance, "nothing debited")
		require.Len(t, g.Assets, 1+i%4)
		for _, a := range g.Assets {
			assert.Zero(t, a.Credits, "a gift's assets cost nothing")
		}
		gifts := e.account(keyAll).MonthlyGifts
		assert.Equal(t, 5-i, gifts[0].Remaining)
	}
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "paid", "count": 2})
	assert.False(t, g.CoveredByGift, "the sixth is paid")
	assert.Equal(t, int64(16), g.CreditsCharged)
	assert.Equal(t, balance-16, g.CreditsBalance)
	assert.Equal(t, int64(8), g.Assets[0].Credits)

	// Other workspaces and models are not covered.
	g = e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "not a gift"})
	assert.False(t, g.CoveredByGift)
	assert.Equal(t, int64(6), g.CreditsCharged)
	g = e.generate(keyBusiness, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "no gift here"})
	assert.False(t, g.CoveredByGift)
	assert.Equal(t, int64(8), g.CreditsCharged)

	// A failed gift generation refunds nothing and shows 0 credits.
	e.advance(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).Sub(e.now()))
	g = e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "[mock:fail] renewed gift"})
	assert.True(t, g.CoveredByGift, "gifts renew on the first of the month")
	before := e.balance(keyAll)
	e.advance(settle)
	assert.Equal(t, "failed", e.generation(keyAll, g.Assets[0].ID).Status)
	assert.Equal(t, before, e.balance(keyAll), "nothing was charged, nothing is refunded")
}

func TestCreateGenerationInsufficientCredits(t *testing.T) {
	t.Parallel()
	e := start(t)
	tests := []struct {
		body     map[string]any
		required float64
	}{
		{map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"}, 6},
		{map[string]any{"modality": "image", "model_id": "seedream-4", "prompt": "x", "count": 3}, 12},
		{map[string]any{"modality": "video", "model_id": "sora-2", "prompt": "x"}, 60},
		{map[string]any{"modality": "audio", "model_id": "openai-tts-1", "prompt": "x"}, 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.body["model_id"]), func(t *testing.T) {
			e := e.sub(t)
			res := e.post(keyBroke, "/generations", tt.body).expect(http.StatusPaymentRequired, "insufficient_credits")
			d := res.errorDetails()
			assert.Equal(t, tt.required, d["required"])
			assert.Equal(t, float64(0), d["balance"])
		})
	}
	// Validation comes first: an invalid request is a 400 even without credits.
	e.post(keyBroke, "/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x", "aspect_ratio": "5:1"}).expectInvalid("aspect_ratio")

	// Nothing was created or charged.
	assert.Empty(t, decodeAs[apiList[apiAsset]](e.get(keyBroke, "/assets").expect(http.StatusOK)).Data)
	assert.Zero(t, e.balance(keyBroke))

	// A balance just short of the cost: Pixel Garage has 150 credits.
	res := e.post(keyFree, "/generations", map[string]any{"modality": "video", "model_id": "sora-2", "prompt": "x"}).expect(http.StatusCreated)
	assert.Equal(t, float64(90), res.JSON()["credits_balance"])
	res = e.post(keyFree, "/generations", map[string]any{"modality": "video", "model_id": "veo-3-fast", "prompt": "x"}).expect(http.StatusCreated)
	assert.Equal(t, float64(50), res.JSON()["credits_balance"])
	res = e.post(keyFree, "/generations", map[string]any{"modality": "video", "model_id": "sora-2", "prompt": "x"}).expect(http.StatusPaymentRequired, "insufficient_credits")
	assert.Equal(t, float64(60), res.errorDetails()["required"])
	assert.Equal(t, float64(50), res.errorDetails()["balance"])
	assert.Equal(t, int64(50), e.balance(keyFree))
}

func TestCreateGenerationModelOptionViolations(t *testing.T) {
	t.Parallel()
	e := start(t)
	// A reference asset that is not completed yet.
	pending := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:stuck] pending"}).Assets[0].ID
	// A completed image of another workspace (Pixel Garage).
	foreign := decodeAs[apiList[apiAsset]](e.get(keyFree, "/assets?kind=image&limit=1").expect(http.StatusOK)).Data[0].ID
	balance := e.balance(keyAll)

	base := func(modality, model string, extra ...any) map[string]any {
		b := map[string]any{"modality": modality, "model_id": model, "prompt": "a prompt"}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i].(string)] = extra[i+1]
		}
		return b
	}
	png := testkit.DataURI("image/png", testkit.PNG(t, 8, 8))
	gif := testkit.DataURI("image/gif", gifImage(t, 8, 8))
	tests := []struct {
		name    string
		body    map[string]any
		fields  []string
		allowed map[string][]any
	}{
		{"unknown model", base("image", "dall-e-9"), []string{"model_id"},
			map[string][]any{"model_id": {"flux-2-pro", "imagen-4", "seedream-4"}}},
		{"unknown voice model", base("audio", "bark"), []string{"model_id"},
			map[string][]any{"model_id": {"eleven-multilingual-v2", "openai-tts-1"}}},
		{"unknown music model", base("audio", "bark", "track", "music"), []string{"model_id"},
			map[string][]any{"model_id": {"suno-v4.5", "stable-audio-2"}}},
		{"modality mismatch", base("video", "imagen-4"), []string{"modality"}, map[string][]any{"modality": {"image"}}},
		{"audio model as 3d", base("3d", "suno-v4.5"), []string{"modality"}, map[string][]any{"modality": {"audio"}}},
		{"music model on the voice track", base("audio", "suno-v4.5", "track", "voice"), []string{"track"}, map[string][]any{"track": {"music"}}},
		{"music model on the default track", base("audio", "stable-audio-2"), []string{"track"}, map[string][]any{"track": {"music"}}},
		{"voice model on the music track", base("audio", "openai-tts-1", "track", "music"), []string{"track"}, map[string][]any{"track": {"voice"}}},
		{"track on an image", base("image", "imagen-4", "track", "voice"), []string{"track"}, nil},
		{"aspect ratio not offered", base("image", "imagen-4", "aspect_ratio", "21:9"), []string{"aspect_ratio"},
			map[string][]any{"aspect_ratio": {"1:1", "3:4", "4:3", "9:16", "16:9"}}},
		{"video aspect ratio not offered", base("video", "veo-3-fast", "aspect_ratio", "1:1"), []string{"aspect_ratio"},
			map[string][]any{"aspect_ratio": {"16:9", "9:16"}}},
		{"aspect ratio on audio", base("audio", "openai-tts-1", "aspect_ratio", "1:1"), []string{"aspect_ratio"}, nil},
		{"resolution not offered", base("image", "imagen-4", "resolution", "4k"), []string{"resolution"},
			map[string][]any{"resolution": {"1k", "2k"}}},
		{"video resolution on an image", base("image", "flux-2-pro", "resolution", "720p"), []string{"resolution"},
			map[string][]any{"resolution": {"1k", "2k"}}},
		{"resolution not offered by the video model", base("video", "sora-2", "resolution", "1080p"), []string{"resolution"},
			map[string][]any{"resolution": {"720p"}}},
		{"resolution on 3d", base("3d", "meshy-5", "resolution", "1k"), []string{"resolution"}, nil},
		{"duration not offered", base("video", "veo-3-fast", "duration", 5), []string{"duration"}, map[string][]any{"duration": {4.0, 6.0, 8.0}}},
		{"music duration not offered", base("audio", "stable-audio-2", "track", "music", "duration", 60), []string{"duration"},
			map[string][]any{"duration": {10.0, 30.0, 45.0}}},
		{"duration on an image", base("image", "imagen-4", "duration", 4), []string{"duration"}, nil},
		{"duration on voice", base("audio", "openai-tts-1", "duration", 10), []string{"duration"}, nil},
		{"voice not offered", base("audio", "eleven-multilingual-v2", "voice", "alloy"), []string{"voice"},
			map[string][]any{"voice": {"ava", "noah", "mia", "leo"}}},
		{"voice on music", base("audio", "suno-v4.5", "track", "music", "voice", "ava"), []string{"voice"}, nil},
		{"language not offered", base("audio", "openai-tts-1", "language", "fr"), []string{"language"}, map[string][]any{"language": {"en"}}},
		{"language the voice does not speak", base("audio", "eleven-multilingual-v2", "voice", "noah", "language", "fr"), []string{"language"},
			map[string][]any{"language": {"en", "de", "it"}}},
		{"language on video", base("video", "veo-3-fast", "language", "en"), []string{"language"}, nil},
		{"count on a video", base("video", "veo-3-fast", "count", 2), []string{"count"}, nil},
		{"count on 3d", base("3d", "meshy-5", "count", 1), []string{"count"}, nil},
		{"generate_audio without native audio", base("video", "kling-2.5-turbo", "generate_audio", true), []string{"generate_audio"},
			map[string][]any{"generate_audio": {false}}},
		{"generate_audio on an image", base("image", "imagen-4", "generate_audio", false), []string{"generate_audio"}, nil},
		{"missing required reference (3d)", base("3d", "trellis-2"), []string{"reference_asset_ids"}, nil},
		{"missing required reference (video)", base("video", "kling-2.5-i2v"), []string{"reference_asset_ids"}, nil},
		{"too many reference ids", base("3d", "trellis-2", "reference_asset_ids", []int{1, 4}), []string{"reference_asset_ids"}, nil},
		{"too many reference ids for the model", base("image", "seedream-4", "reference_asset_ids", []int{1, 4, 9}), []string{"reference_asset_ids"}, nil},
		{"too many reference urls", base("video", "veo-3-fast", "reference_image_urls", []string{png, png}), []string{"reference_image_urls"}, nil},
		{"references to a model that takes none", base("image", "imagen-4", "reference_image_urls", []string{png}), []string{"reference_image_urls"}, nil},
		{"reference asset not found", base("3d", "trellis-2", "reference_asset_ids", []int{999999}), []string{"reference_asset_ids[0]"}, nil},
		{"reference asset of another workspace", base("3d", "trellis-2", "reference_asset_ids", []int64{foreign}), []string{"reference_asset_ids[0]"}, nil},
		{"reference asset not an image", base("image", "flux-2-pro", "reference_asset_ids", []int{1, 2}), []string{"reference_asset_ids[1]"}, nil},
		{"reference asset not completed", base("3d", "trellis-2", "reference_asset_ids", []int64{pending}), []string{"reference_asset_ids[0]"}, nil},
		{"reference url not an accepted image", base("3d", "trellis-2", "reference_image_urls", []string{gif}), []string{"reference_image_urls[0]"}, nil},
		{"reference url not an image data URI", base("3d", "trellis-2", "reference_image_urls", []string{"data:text/plain;base64,aGVsbG8="}), []string{"reference_image_urls[0]"}, nil},
		{"every option violation at once", base("image", "imagen-4", "aspect_ratio", "2:1", "resolution", "8k", "duration", 4, "voice", "ava"),
			[]string{"aspect_ratio", "resolution", "duration", "voice"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			res := e.post(keyAll, "/generations", tt.body).expectInvalid(tt.fields...)
			for _, v := range res.Violations() {
				assert.Equal(t, "body", v.In)
			}
			for field, allowed := range tt.allowed {
				assert.Equal(t, allowed, violation(t, res, field).Allowed, "allowed values of %s", field)
			}
		})
	}
	assert.Equal(t, balance, e.balance(keyAll), "a refused request charges nothing")
	list := decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets?limit=1").expect(http.StatusOK))
	assert.Equal(t, pending, list.Data[0].ID, "and creates no asset")
}

func TestCreateGenerationSchemaViolations(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	tests := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"missing required fields", map[string]any{}, []string{"modality", "model_id", "prompt"}},
		{"count 0", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x", "count": 0}, []string{"count"}},
		{"count 5", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x", "count": 5}, []string{"count"}},
		{"prompt of 5001 characters", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": strings.Repeat("p", 5001)}, []string{"prompt"}},
		{"empty prompt", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": ""}, []string{"prompt"}},
		{"aspect ratio not W:H", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x", "aspect_ratio": "wide"}, []string{"aspect_ratio"}},
		{"language not a code", map[string]any{"modality": "audio", "model_id": "openai-tts-1", "prompt": "x", "language": "English"}, []string{"language"}},
		{"five reference urls", map[string]any{"modality": "3d", "model_id": "hunyuan3d-2.1", "prompt": "x",
			"reference_image_urls": []string{"https://a.example/1.png", "https://a.example/2.png", "https://a.example/3.png", "https://a.example/4.png", "https://a.example/5.png"}}, []string{"reference_image_urls"}},
		{"reference url over http", map[string]any{"modality": "3d", "model_id": "trellis-2", "prompt": "x", "reference_image_urls": []string{"http://example.com/a.png"}}, []string{"reference_image_urls[0]"}},
		{"wait_seconds over 55", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x", "wait_seconds": 56}, []string{"wait_seconds"}},
		{"unknown field", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x", "aspectRatio": "1:1"}, []string{"aspectRatio"}},
		{"track outside the enum", map[string]any{"modality": "audio", "model_id": "openai-tts-1", "prompt": "x", "track": "podcast"}, []string{"track"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			e.post(keyAll, "/generations", tt.body).expectInvalid(tt.fields...)
		})
	}
}

func TestGenerationLifecycle(t *testing.T) {
	t.Parallel()
	e := start(t)
	balance := e.balance(keyAll)
	// imagen-4: about 1 s in the provider's queue, then about 6 s of processing.
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a tiny robot", "count": 2})
	assert.Equal(t, "queued", g.Status)
	id := g.Assets[1].ID
	for _, path := range []string{"/generations/%d", "/assets/%d"} {
		r := decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf(path, id)).expect(http.StatusOK))
		assert.Equal(t, "queued", r.Status, path)
		assert.Equal(t, ids(g.Assets), ids(r.Assets), "every asset of the generation")
	}

	e.advance(1300 * time.Millisecond)
	r := e.generation(keyAll, id)
	assert.Equal(t, "processing", r.Status)
	for _, a := range r.Assets {
		assert.Equal(t, "processing", a.Status)
		assert.Empty(t, a.URL)
	}

	e.advance(10 * time.Second)
	r = e.generation(keyAll, id)
	assert.Equal(t, "completed", r.Status)
	assets := decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf("/assets/%d", id)).expect(http.StatusOK))
	assert.Equal(t, r, assets, "GET /assets/{id} is GET /generations/{id}")
	for _, a := range r.Assets {
		assert.Equal(t, "completed", a.Status)
		assert.Equal(t, "image/png", a.MimeType)
		assert.Equal(t, 1024, a.Width)
		assert.Equal(t, 1024, a.Height)
		assert.Equal(t, int64(6), a.Credits)
		assert.Nil(t, a.Error)
		assert.True(t, strings.HasPrefix(a.URL, "http"), a.URL)
		assert.True(t, strings.HasPrefix(a.DownloadURL, "http"), a.DownloadURL)
	}
	assert.NotEqual(t, r.Assets[0].URL, r.Assets[1].URL, "each output has its own file")
	assert.Equal(t, balance-12, e.balance(keyAll), "a completed generation keeps its charge")
}

func TestGenerationFailuresRefund(t *testing.T) {
	t.Parallel()
	e := start(t)
	tests := []struct {
		name, prompt, code string
		model              string
		credits            int64
		neverProcessing    bool
	}{
		{"fail while processing", "a cat [mock:fail]", "provider_error", "imagen-4", 6, false},
		{"fail before processing", "[mock:fail-queued] a dog", "", "flux-2-pro", 8, true},
		{"fail with a code", "a bird [mock:fail-code=content_policy]", "content_policy", "seedream-4", 4, false},
		{"video failure", "[mock:fail] a storm", "provider_error", "sora-2", 60, false},
	}
	// Spend the flux-2-pro gifts so that every case here is paid.
	for range 5 {
		e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "gift"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.sub(t)
			before := e.balance(keyAll)
			modality := "image"
			if tt.model == "sora-2" {
				modality = "video"
			}
			g := e.generate(keyAll, map[string]any{"modality": modality, "model_id": tt.model, "prompt": tt.prompt})
			assert.Equal(t, tt.credits, g.CreditsCharged)
			assert.Equal(t, before-tt.credits, e.balance(keyAll), "charged at creation")
			id := g.Assets[0].ID
			assert.Equal(t, tt.prompt, g.Assets[0].Prompt, "the marker is stored as sent")

			// Step through the lifecycle: every state lasts longer than a step.
			sawProcessing := false
			for range 300 {
				r := e.generation(keyAll, id)
				if r.Status == "processing" {
					sawProcessing = true
				}
				if r.Status == "failed" || r.Status == "completed" {
					break
				}
				e.advance(2 * time.Second)
			}
			r := e.generation(keyAll, id)
			require.Equal(t, "failed", r.Status)
			a := r.Assets[0]
			assert.Equal(t, "failed", a.Status)
			require.NotNil(t, a.Error, "a failed asset says why")
			assert.NotEmpty(t, a.Error.Code)
			assert.NotEmpty(t, a.Error.Message)
			if tt.code != "" {
				assert.Equal(t, tt.code, a.Error.Code)
			}
			assert.Zero(t, a.Credits, "refunded")
			assert.Empty(t, a.URL, "no file")
			assert.Empty(t, a.DownloadURL)
			assert.Equal(t, !tt.neverProcessing, sawProcessing)
			assert.Equal(t, before, e.balance(keyAll), "the charge is refunded")
			e.advance(settle)
			assert.Equal(t, before, e.balance(keyAll), "exactly once")
		})
	}
	t.Run("a failure fails every output and refunds them all", func(t *testing.T) {
		e := e.sub(t)
		before := e.balance(keyAll)
		g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "seedream-4", "prompt": "[mock:fail]", "count": 4})
		assert.Equal(t, int64(16), g.CreditsCharged)
		e.advance(settle)
		r := e.generation(keyAll, g.Assets[3].ID)
		assert.Equal(t, "failed", r.Status)
		require.Len(t, r.Assets, 4)
		for _, a := range r.Assets {
			assert.Equal(t, "failed", a.Status)
			assert.Zero(t, a.Credits)
		}
		assert.Equal(t, before, e.balance(keyAll))
	})
}

func TestGenerationDelayAndStuckMarkers(t *testing.T) {
	t.Parallel()
	e := start(t)
	delayed := e.generate(keyAll, map[string]any{"modality": "video", "model_id": "veo-3-fast", "prompt": "[mock:delay=45] a slow pan"})
	stuck := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:stuck] forever"})
	assert.Equal(t, "processing", delayed.Status, "no provider queue: processing at once")
	assert.Equal(t, "processing", delayed.Assets[0].Status)

	e.advance(44 * time.Second)
	assert.Equal(t, "processing", e.generation(keyAll, delayed.Assets[0].ID).Status)
	e.advance(time.Second)
	assert.Equal(t, "completed", e.generation(keyAll, delayed.Assets[0].ID).Status, "done after exactly 45 s")

	e.advance(24 * time.Hour)
	r := e.generation(keyAll, stuck.Assets[0].ID)
	assert.Equal(t, "processing", r.Status, "a stuck job never finishes")
	assert.Equal(t, int64(6), r.Assets[0].Credits, "and keeps its charge")
}

func TestGenerationWaitSecondsOnVirtualClock(t *testing.T) {
	t.Parallel()
	e := start(t, virtualClock)
	t0 := e.now()
	res := e.post(keyAll, "/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "quick", "count": 3, "wait_seconds": 55}).expect(http.StatusCreated)
	g := decodeAs[apiGeneration](res)
	assert.Equal(t, "completed", g.Status, "the create response waited for the end")
	assert.Equal(t, int64(18), g.CreditsCharged)
	require.Len(t, g.Assets, 3)
	for _, a := range g.Assets {
		assert.Equal(t, "completed", a.Status)
		assert.NotEmpty(t, a.URL)
	}
	assert.Less(t, e.now().Sub(t0), 15*time.Second, "the clock moved only up to the end of the job")

	// A video takes longer than one wait: the read answers with the state at the end of the wait.
	v := e.generate(keyAll, map[string]any{"modality": "video", "model_id": "veo-3-fast", "prompt": "long", "duration": 8})
	t1 := e.now()
	r := decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf("/generations/%d?wait_seconds=55", v.Assets[0].ID)).expect(http.StatusOK))
	assert.Contains(t, []string{"queued", "processing"}, r.Status)
	assert.Equal(t, 55*time.Second, e.now().Sub(t1), "the wait moved the clock by 55 s")
	r = decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf("/assets/%d?wait_seconds=55", v.Assets[0].ID)).expect(http.StatusOK))
	assert.Equal(t, "completed", r.Status)
	assert.Equal(t, 8, r.Assets[0].DurationSeconds)

	// Failures end a wait too; a final generation answers at once.
	f := decodeAs[apiGeneration](e.post(keyAll, "/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:fail-code=timeout]", "wait_seconds": 30}).expect(http.StatusCreated))
	assert.Equal(t, "failed", f.Status)
	assert.Equal(t, "timeout", f.Assets[0].Error.Code)
	t2 := e.now()
	e.get(keyAll, fmt.Sprintf("/generations/%d?wait_seconds=55", f.Assets[0].ID)).expect(http.StatusOK)
	assert.Equal(t, t2, e.now(), "no wait for a final generation")

	// A stuck job waits the whole time and is still processing.
	s := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:stuck]"})
	r = decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf("/generations/%d?wait_seconds=20", s.Assets[0].ID)).expect(http.StatusOK))
	assert.Equal(t, "processing", r.Status)
}

func TestGetGenerationNotFound(t *testing.T) {
	t.Parallel()
	e := start(t)
	mine := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "mine"}).Assets[0].ID
	upload := e.uploadPNG(keyAll, 4, 4, "mine.png").ID
	for _, path := range []string{"/generations/%d", "/assets/%d"} {
		t.Run(path, func(t *testing.T) {
			e := e.sub(t)
			e.get(keyAll, fmt.Sprintf(path, 999999)).expect(http.StatusNotFound, "not_found")
			e.get(keyFree, fmt.Sprintf(path, mine)).expect(http.StatusNotFound, "not_found")
			e.get(keyFree, fmt.Sprintf(path, upload)).expect(http.StatusNotFound, "not_found")
			e.get(keyFree, fmt.Sprintf(path, 1)).expect(http.StatusNotFound, "not_found")
			e.get(keyAll, fmt.Sprintf(path, mine)).expect(http.StatusOK)
			e.get(keyAll, fmt.Sprintf(path, 0)).expectInvalid("id")
			e.get(keyAll, fmt.Sprintf(path, mine)+"?wait_seconds=56").expectInvalid("wait_seconds")
		})
	}
}

func TestAssetFiles(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	// The library's video and image assets (fixture assets 2 and 1 of Acme Studio).
	video := e.generation(keyRead, 2).Assets[0]
	image := e.generation(keyRead, 1).Assets[0]
	for _, a := range []apiAsset{video, image} {
		require.Equal(t, "completed", a.Status)
		require.NotEmpty(t, a.URL)
	}
	assert.Equal(t, "video/mp4", video.MimeType)
	assert.Equal(t, "image/png", image.MimeType)

	res := e.fetch(video.URL).expect(http.StatusOK)
	assert.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	full := res.Body
	require.Greater(t, len(full), 100)
	assert.Equal(t, "ftyp", string(full[4:8]), "an MP4 file")
	assert.Empty(t, res.Header.Get("Content-Disposition"), "url is inline")
	assert.Equal(t, "bytes", res.Header.Get("Accept-Ranges"))
	assert.NotEmpty(t, res.Header.Get("Last-Modified"))
	assert.Equal(t, full, e.fetch(video.URL).Body, "the same bytes every time")
	if etag := res.Header.Get("ETag"); assert.NotEmpty(t, etag) {
		e.fetch(video.URL, "If-None-Match", etag).expect(http.StatusNotModified)
	}

	res = e.fetch(video.DownloadURL).expect(http.StatusOK)
	assert.True(t, strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment"), res.Header.Get("Content-Disposition"))
	assert.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	assert.Equal(t, full, res.Body)

	res = e.fetch(video.URL, "Range", "bytes=0-99").expect(http.StatusPartialContent)
	assert.Equal(t, full[:100], res.Body)
	assert.Equal(t, fmt.Sprintf("bytes 0-99/%d", len(full)), res.Header.Get("Content-Range"))
	res = e.fetch(video.URL, "Range", "bytes=-10").expect(http.StatusPartialContent)
	assert.Equal(t, full[len(full)-10:], res.Body)
	e.fetch(video.URL, "Range", fmt.Sprintf("bytes=%d-", len(full)+10)).expect(http.StatusRequestedRangeNotSatisfiable)

	head := e.call(req{method: http.MethodHead, path: video.URL}).expect(http.StatusOK)
	assert.Empty(t, head.Body)
	assert.Equal(t, fmt.Sprint(len(full)), head.Header.Get("Content-Length"))
	assert.Equal(t, "video/mp4", head.Header.Get("Content-Type"))

	res = e.fetch(image.URL).expect(http.StatusOK)
	assert.Equal(t, "image/png", res.Header.Get("Content-Type"))
	assert.Equal(t, "\x89PNG", string(res.Body[:4]))

	// Unknown files: a wrong token, another asset's token, a wrong extension, nonsense.
	base := video.URL[:strings.LastIndex(video.URL, "/")+1]
	for _, u := range []string{
		base + "0000000000000000.mp4",
		strings.Replace(video.URL, ".mp4", ".png", 1),
		strings.Replace(image.URL, "/a/1/1/", "/a/1/2/", 1),
		strings.Replace(video.URL, "/files/a/", "/files/z/", 1),
		video.URL[:strings.Index(video.URL, "/files/")] + "/files/nothing",
	} {
		e.fetch(u).expect(http.StatusNotFound)
	}
}

func TestAssetFilesAppearOnlyOnceCompleted(t *testing.T) {
	t.Parallel()
	e := start(t)
	g := e.generate(keyAll, map[string]any{"modality": "audio", "track": "music", "model_id": "stable-audio-2", "prompt": "ambient rain", "duration": 10})
	e.advance(settle)
	a := e.generation(keyAll, g.Assets[0].ID).Assets[0]
	require.Equal(t, "completed", a.Status)
	res := e.fetch(a.URL).expect(http.StatusOK)
	assert.Equal(t, "audio/wav", res.Header.Get("Content-Type"))
	assert.Equal(t, "RIFF", string(res.Body[:4]))
}

func TestGenerationConcurrencyPerModality(t *testing.T) {
	t.Parallel()
	e := start(t)
	// At most 8 running generations per workspace and modality; each of these
	// processes for exactly 10 s without a provider queue.
	var images []int64
	for range 9 {
		images = append(images, e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:delay=10]"}).Assets[0].ID)
	}
	video := e.generate(keyAll, map[string]any{"modality": "video", "model_id": "veo-3-fast", "prompt": "[mock:delay=10]"}).Assets[0].ID
	other := e.generate(keyBusiness, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:delay=10]"}).Assets[0].ID
	status := func(ids ...int64) []string {
		var out []string
		for _, id := range ids {
			out = append(out, e.generation(keyAll, id).Status)
		}
		return out
	}
	assert.Equal(t, []string{"processing", "processing", "processing", "processing", "processing", "processing", "processing", "processing", "queued"}, status(images...))
	assert.Equal(t, "processing", e.generation(keyAll, video).Status, "another modality has its own slots")
	assert.Equal(t, "processing", e.generation(keyBusiness, other).Status, "another workspace has its own slots")
	assert.Equal(t, int64(5000-9*6-40), e.balance(keyAll), "a queued job is charged at creation")

	e.advance(10 * time.Second)
	got := status(images...)
	assert.Equal(t, []string{"completed", "processing"}, []string{got[0], got[8]}, "the ninth starts when a slot frees")
	e.advance(10 * time.Second)
	assert.Equal(t, "completed", e.generation(keyAll, images[8]).Status)
}
