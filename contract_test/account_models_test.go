package contract_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetAccountOfEachDefaultKey(t *testing.T) {
	t.Parallel()
	e := start(t)
	acme := []apiGift{
		{ModelID: "flux-2-pro", Remaining: 5, PerMonth: 5, RenewsAt: "2026-02-01T00:00:00+00:00"},
		{ModelID: "openai-tts-1", Remaining: 3, PerMonth: 3, RenewsAt: "2026-02-01T00:00:00+00:00"},
	}
	tests := []struct {
		token, workspace, plan string
		credits                int64
		rate                   int
		scopes                 []string
		tokenType              string
		publishing             bool
		gifts                  []apiGift
	}{
		{keyAll, "Acme Studio", "pro", 5000, 120, []string{"read", "generate", "publish"}, "api_key", true, acme},
		{keyRead, "Acme Studio", "pro", 5000, 120, []string{"read"}, "api_key", true, acme},
		{tokenOAuth, "Acme Studio", "pro", 5000, 120, []string{"read", "publish"}, "oauth", true, acme},
		{keyFree, "Pixel Garage", "free", 150, 20, []string{"read", "generate", "publish"}, "api_key", false,
			[]apiGift{{ModelID: "imagen-4", Remaining: 2, PerMonth: 2, RenewsAt: "2026-02-01T00:00:00+00:00"}}},
		{keyBusiness, "Northwind Media", "business", 100000, 600, []string{"read", "generate", "publish"}, "api_key", true, []apiGift{}},
		{keyBroke, "Empty Wallet Co", "creator", 0, 120, []string{"read", "generate", "publish"}, "api_key", true, []apiGift{}},
	}
	workspaceIDs := map[string]int64{}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			e := e.sub(t)
			res := e.get(tt.token, "/account").expect(http.StatusOK)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			a := decodeAs[apiAccount](res)
			assert.Equal(t, "account", a.Object)
			assert.Equal(t, tt.workspace, a.WorkspaceName)
			assert.Equal(t, tt.plan, a.Plan)
			assert.Equal(t, tt.credits, a.CreditsBalance)
			assert.Equal(t, tt.rate, a.RateLimitPerMinute)
			assert.Equal(t, tt.scopes, a.Scopes)
			assert.Equal(t, tt.tokenType, a.TokenType)
			assert.Equal(t, tt.publishing, a.PublishingAllowed)
			assert.Equal(t, tt.gifts, a.MonthlyGifts)
			assert.Positive(t, a.WorkspaceID)
			if id, ok := workspaceIDs[tt.workspace]; ok {
				assert.Equal(t, id, a.WorkspaceID, "keys of one workspace see the same workspace")
			} else {
				for other, oid := range workspaceIDs {
					assert.NotEqual(t, oid, a.WorkspaceID, "%s and %s are different workspaces", tt.workspace, other)
				}
				workspaceIDs[tt.workspace] = a.WorkspaceID
			}
		})
	}
}

func TestGetAccountMonthlyGiftsAreUsedAndRenewMonthly(t *testing.T) {
	t.Parallel()
	e := start(t)
	gift := func(model string) apiGift {
		t.Helper()
		for _, g := range e.account(keyAll).MonthlyGifts {
			if g.ModelID == model {
				return g
			}
		}
		require.Failf(t, "no monthly gift", "model %s", model)
		return apiGift{}
	}
	g := e.generate(keyAll, map[string]any{"modality": "audio", "model_id": "openai-tts-1", "prompt": "Hello there."})
	assert.True(t, g.CoveredByGift)
	assert.Equal(t, apiGift{ModelID: "openai-tts-1", Remaining: 2, PerMonth: 3, RenewsAt: "2026-02-01T00:00:00+00:00"}, gift("openai-tts-1"))
	assert.Equal(t, 5, gift("flux-2-pro").Remaining, "gifts are per model")

	// The clock's calendar month decides: on February 1st (UTC) the gift is whole again.
	e.advance(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).Sub(e.now()))
	assert.Equal(t, apiGift{ModelID: "openai-tts-1", Remaining: 3, PerMonth: 3, RenewsAt: "2026-03-01T00:00:00+00:00"}, gift("openai-tts-1"))
}

func TestListModelsGroupedByModality(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	type catalog struct {
		Object     string                      `json:"object"`
		Modalities map[string][]map[string]any `json:"modalities"`
	}
	all := decodeAs[catalog](e.get(keyRead, "/models").expect(http.StatusOK))
	assert.Equal(t, "model_catalog", all.Object)
	require.ElementsMatch(t, fixtures.ModalityNames(), keys(all.Modalities))
	seen := map[string]bool{}
	for modality, models := range all.Modalities {
		assert.NotEmpty(t, models, modality)
		for _, m := range models {
			id := m["id"].(string)
			assert.False(t, seen[id], "model %s is listed once", id)
			seen[id] = true
			assert.Equal(t, "model", m["object"])
			assert.Equal(t, modality, m["modality"], "model %s is in its modality's group", id)
			assert.Positive(t, m["credits_per_output"], id)
			if modality == "audio" {
				assert.Contains(t, []any{"voice", "music"}, m["track"], "audio model %s has a track", id)
			} else {
				assert.NotContains(t, m, "track", "only audio models have a track")
			}
			if m["requires_reference_image"] == true {
				assert.Positive(t, m["max_reference_images"], "model %s requires a reference it can take", id)
			}
		}
	}
	for _, id := range []string{"flux-2-pro", "imagen-4", "veo-3-fast", "eleven-multilingual-v2", "suno-v4.5", "trellis-2"} {
		assert.True(t, seen[id], "the catalog has %s", id)
	}

	tests := []struct {
		query, group string
		track        string // every model kept has this track
	}{
		{"modality=image", "image", ""},
		{"modality=video", "video", ""},
		{"modality=audio", "audio", ""},
		{"modality=3d", "3d", ""},
		{"track=voice", "audio", "voice"},
		{"track=music", "audio", "music"},
		{"modality=audio&track=voice", "audio", "voice"},
		{"modality=audio&track=music", "audio", "music"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e := e.sub(t)
			c := decodeAs[catalog](e.get(keyRead, "/models?"+tt.query).expect(http.StatusOK))
			require.Equal(t, []string{tt.group}, keys(c.Modalities), "one group")
			var want []any
			for _, m := range all.Modalities[tt.group] {
				if tt.track == "" || m["track"] == tt.track {
					want = append(want, m["id"])
				}
			}
			var got []any
			for _, m := range c.Modalities[tt.group] {
				got = append(got, m["id"])
			}
			assert.NotEmpty(t, got)
			assert.Equal(t, want, got, "the same models, in the same order, as the whole catalog")
		})
	}

	t.Run("track with another modality", func(t *testing.T) {
		e := e.sub(t)
		for _, q := range []string{"modality=image&track=voice", "modality=video&track=music", "modality=3d&track=voice"} {
			e.get(keyRead, "/models?"+q).expectInvalid("track")
		}
	})
	t.Run("values outside the enums", func(t *testing.T) {
		e := e.sub(t)
		res := e.get(keyRead, "/models?modality=painting").expectInvalid("modality")
		v := violation(t, res, "modality")
		assert.Equal(t, "query", v.In)
		assert.ElementsMatch(t, modalityNames(), v.Allowed)

		res = e.get(keyRead, "/models?track=podcast").expectInvalid("track")
		assert.Equal(t, []any{"voice", "music"}, violation(t, res, "track").Allowed)

		res = e.get(keyRead, "/models?modality=AUDIO&track=Voice").expectInvalid("modality", "track")
		for _, v := range res.Violations() {
			assert.Equal(t, "query", v.In)
		}
	})
}

func TestListModelsOptionsAndDefaults(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	type voice struct {
		ID        string   `json:"id"`
		Languages []string `json:"languages"`
	}
	type model struct {
		ID      string `json:"id"`
		Options struct {
			AspectRatios []string `json:"aspect_ratios"`
			Resolutions  []string `json:"resolutions"`
			Durations    []int    `json:"durations"`
			Voices       []voice  `json:"voices"`
			Languages    []string `json:"languages"`
			MaxCount     int      `json:"max_count"`
		} `json:"options"`
		Defaults struct {
			AspectRatio string `json:"aspect_ratio"`
			Resolution  string `json:"resolution"`
			Duration    int    `json:"duration"`
			Voice       string `json:"voice"`
			Language    string `json:"language"`
		} `json:"defaults"`
	}
	c := decodeAs[struct {
		Modalities map[string][]model `json:"modalities"`
	}](e.get(keyRead, "/models").expect(http.StatusOK))
	for group, models := range c.Modalities {
		for _, m := range models {
			o, d := m.Options, m.Defaults
			if group == "image" {
				assert.True(t, o.MaxCount >= 1 && o.MaxCount <= 4, "%s: max_count", m.ID)
			} else {
				assert.Zero(t, o.MaxCount, "%s: max_count is for images", m.ID)
			}
			// Every default is one of the offered values.
			if d.AspectRatio != "" {
				assert.Contains(t, o.AspectRatios, d.AspectRatio, m.ID)
			}
			if d.Resolution != "" {
				assert.Contains(t, o.Resolutions, d.Resolution, m.ID)
			}
			if d.Duration != 0 {
				assert.Contains(t, o.Durations, d.Duration, m.ID)
			}
			if d.Language != "" {
				assert.Contains(t, o.Languages, d.Language, m.ID)
			}
			if d.Voice != "" {
				assert.True(t, slices.ContainsFunc(o.Voices, func(v voice) bool { return v.ID == d.Voice }), "%s: default voice", m.ID)
			}
			for _, v := range o.Voices {
				for _, l := range v.Languages {
					assert.Contains(t, o.Languages, l, "%s: voice %s speaks a language of the model", m.ID, v.ID)
				}
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
