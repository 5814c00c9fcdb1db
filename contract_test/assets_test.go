package contract_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// library builds a varied library in Acme Studio on top of the fixture:
// every kind, every status, uploads with titles. Nothing in it changes
// when the clock moves on (stuck jobs, and an Encore creation queued
// behind three stuck ones), so tests can move the clock to open a new
// rate-limit window. It returns every asset of the workspace, newest
// first, as GET /assets lists them.
func library(t *testing.T, e *env) []apiAsset {
	t.Helper()
	e.generate(keyAll, map[string]any{"modality": "3d", "model_id": "meshy-5", "prompt": "A Ceramic Mug with a chipped handle"})
	e.generate(keyAll, map[string]any{"modality": "audio", "model_id": "openai-tts-1", "prompt": "Our cozy kitchen opens at nine."})
	e.uploadPNG(keyAll, 4, 3, "Kitchen Counter.PNG")
	e.generate(keyAll, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "[mock:fail] a broken latte", "count": 2})
	e.generate(keyAll, map[string]any{"modality": "image", "model_id": "seedream-4", "prompt": "[mock:stuck] latte art in progress"})
	frozen := e.uploadPNG(keyAll, 600, 800, "[mock:stuck] frozen.png")
	for _, effect := range []string{"golden-hour", "disco-spin", "snow-globe", "anime-me"} {
		e.createEncore(keyAll, map[string]any{"effect": effect, "asset_id": frozen.ID})
	}
	e.advance(settle)
	all, _ := pages[apiAsset](e, keyAll, "/assets", 50)
	return all
}

func TestListAssetsNewestFirstAndPagination(t *testing.T) {
	t.Parallel()
	e := start(t)
	all := library(t, e)
	require.Len(t, all, 16+11, "the fixture's 16 assets and the 11 made here")
	for i := 1; i < len(all); i++ {
		assert.Greater(t, all[i-1].ID, all[i].ID, "newest first")
		assert.False(t, parseTime(t, all[i].CreatedAt).After(parseTime(t, all[i-1].CreatedAt)), "newest first")
	}

	first := decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets").expect(http.StatusOK))
	assert.Len(t, first.Data, 20, "the default limit is 20")
	assert.True(t, first.HasMore)
	require.NotNil(t, first.NextCursor)
	assert.Equal(t, all[19].ID, *first.NextCursor, "the cursor is the last id of the page")

	for _, limit := range []int{1, 5, 7, 26, 27, 50} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			e := e.sub(t)
			e.advance(time.Minute) // a new rate-limit window
			got, n := pages[apiAsset](e, keyAll, "/assets", limit)
			assert.Equal(t, (len(all)+limit-1)/limit, n, "pages")
			assert.Equal(t, ids(all), ids(got), "every asset exactly once, in order")
		})
	}

	// Any id works as a cursor, even one that is not in the list.
	rest := decodeAs[apiList[apiAsset]](e.get(keyAll, fmt.Sprintf("/assets?limit=50&starting_after=%d", all[3].ID)).expect(http.StatusOK))
	assert.Equal(t, ids(all[4:]), ids(rest.Data))
	rest = decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets?limit=50&starting_after=1").expect(http.StatusOK))
	assert.Empty(t, rest.Data)
	assert.False(t, rest.HasMore)
	rest = decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets?limit=2&starting_after=999999").expect(http.StatusOK))
	assert.Equal(t, ids(all[:2]), ids(rest.Data))

	t.Run("limits out of range", func(t *testing.T) {
		e := e.sub(t)
		for _, q := range []string{"limit=0", "limit=51", "limit=-1"} {
			res := e.get(keyAll, "/assets?"+q).expectInvalid("limit")
			assert.Equal(t, "query", res.Violations()[0].In)
		}
	})
}

func TestListAssetsFilters(t *testing.T) {
	t.Parallel()
	e := start(t)
	all := library(t, e)
	projects := decodeAs[apiList[apiProject]](e.get(keyAll, "/projects").expect(http.StatusOK)).Data
	projectID := map[string]int64{}
	for _, p := range projects {
		projectID[p.Name] = p.ID
	}
	spring := projectID["Spring Launch"]
	require.NotZero(t, spring)

	isUpload := func(a apiAsset) bool { return a.Kind == "image" && a.Model == "" }
	text := func(needle string) func(apiAsset) bool {
		return func(a apiAsset) bool {
			return strings.Contains(strings.ToLower(a.Title+"\n"+a.Prompt), strings.ToLower(needle))
		}
	}
	tests := []struct {
		query string
		keep  func(apiAsset) bool
	}{
		{"kind=image", func(a apiAsset) bool { return a.Kind == "image" }},
		{"kind=video", func(a apiAsset) bool { return a.Kind == "video" }},
		{"kind=voice", func(a apiAsset) bool { return a.Kind == "voice" }},
		{"kind=music", func(a apiAsset) bool { return a.Kind == "music" }},
		{"kind=audio", func(a apiAsset) bool { return a.Kind == "voice" || a.Kind == "music" }},
		{"kind=model3d", func(a apiAsset) bool { return a.Kind == "model3d" }},
		{"kind=upload", isUpload},
		{"status=completed", func(a apiAsset) bool { return a.Status == "completed" }},
		{"status=failed", func(a apiAsset) bool { return a.Status == "failed" }},
		{"status=processing", func(a apiAsset) bool { return a.Status == "processing" }},
		{"status=queued", func(a apiAsset) bool { return a.Status == "queued" }},
		{"query=latte", text("latte")},
		{"query=LATTE", text("latte")},
		{"query=" + url.QueryEscape("Cozy Kitchen"), text("cozy kitchen")},
		{"query=kitchen", text("kitchen")},
		{"query=storefront", text("storefront")},
		{"query=.png", text(".png")},
		{"query=no-such-words", text("no-such-words")},
		{fmt.Sprintf("project_id=%d", spring), func(a apiAsset) bool { return a.ProjectID == spring }},
		{fmt.Sprintf("project_id=%d", projectID["Holiday Lookbook"]), func(a apiAsset) bool { return a.ProjectID == projectID["Holiday Lookbook"] }},
		{"project_id=999", func(a apiAsset) bool { return false }},
		{fmt.Sprintf("kind=image&project_id=%d", spring), func(a apiAsset) bool { return a.Kind == "image" && a.ProjectID == spring }},
		{"kind=image&status=failed", func(a apiAsset) bool { return a.Kind == "image" && a.Status == "failed" }},
		{"kind=upload&query=kitchen", func(a apiAsset) bool { return isUpload(a) && text("kitchen")(a) }},
		{"kind=video&status=completed&query=a", func(a apiAsset) bool {
			return a.Kind == "video" && a.Status == "completed" && text("a")(a)
		}},
		{fmt.Sprintf("kind=audio&status=completed&project_id=%d", projectID["Holiday Campaign"]), func(a apiAsset) bool {
			return (a.Kind == "voice" || a.Kind == "music") && a.Status == "completed" && a.ProjectID == projectID["Holiday Campaign"]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e := e.sub(t)
			e.advance(time.Minute) // a new rate-limit window
			want := []int64{}
			for _, a := range all {
				if tt.keep(a) {
					want = append(want, a.ID)
				}
			}
			got, _ := pages[apiAsset](e, keyAll, "/assets?"+tt.query, 50)
			assert.Equal(t, want, ids(got))
			// The same through small pages.
			if len(want) > 2 {
				got, n := pages[apiAsset](e, keyAll, "/assets?"+tt.query, 2)
				assert.Equal(t, want, ids(got), "paged")
				assert.Equal(t, (len(want)+1)/2, n)
			}
		})
	}
	// The fixture and the library made above give every filter something to find.
	for _, kind := range []string{"image", "video", "voice", "music", "model3d"} {
		assert.True(t, slices.ContainsFunc(all, func(a apiAsset) bool { return a.Kind == kind }), kind)
	}
	for _, status := range []string{"queued", "processing", "completed", "failed"} {
		assert.True(t, slices.ContainsFunc(all, func(a apiAsset) bool { return a.Status == status }), status)
	}

	t.Run("values outside the enums", func(t *testing.T) {
		e := e.sub(t)
		res := e.get(keyAll, "/assets?kind=photo").expectInvalid("kind")
		assert.ElementsMatch(t, kindNames(), violation(t, res, "kind").Allowed)
		res = e.get(keyAll, "/assets?status=done").expectInvalid("status")
		assert.Equal(t, []any{"queued", "processing", "completed", "failed"}, violation(t, res, "status").Allowed)
		e.get(keyAll, "/assets?project_id=0").expectInvalid("project_id")
	})
}

func TestListAssetsOfEachWorkspace(t *testing.T) {
	t.Parallel()
	e := start(t) // counts the fixture's assets: a fresh server
	acme, _ := pages[apiAsset](e, keyRead, "/assets", 50)
	pixel, _ := pages[apiAsset](e, keyFree, "/assets", 50)
	northwind, _ := pages[apiAsset](e, keyBusiness, "/assets", 50)
	assert.Len(t, pixel, 4)
	assert.Len(t, northwind, 40)
	seen := map[int64]string{}
	for name, list := range map[string][]apiAsset{"acme": acme, "pixel": pixel, "northwind": northwind} {
		for _, a := range list {
			assert.Empty(t, seen[a.ID], "asset %d listed by %s and %s", a.ID, name, seen[a.ID])
			seen[a.ID] = name
			assert.Equal(t, "asset", a.Object)
			parseTime(t, a.CreatedAt)
			if a.Status == "completed" {
				assert.NotEmpty(t, a.URL)
				assert.NotEmpty(t, a.DownloadURL)
				assert.NotEmpty(t, a.MimeType)
			}
			switch a.Kind {
			case "image", "video":
				if a.Status == "completed" {
					assert.Positive(t, a.Width)
					assert.Positive(t, a.Height)
				}
			}
			if a.Model == "" {
				assert.NotEmpty(t, a.Title, "an upload has a title")
				assert.Zero(t, a.Credits, "uploads are free")
			}
		}
	}
	// A cursor from another workspace's ids only pages through one's own.
	page := decodeAs[apiList[apiAsset]](e.get(keyFree, fmt.Sprintf("/assets?starting_after=%d", northwind[0].ID+1)).expect(http.StatusOK))
	assert.Equal(t, ids(pixel), ids(page.Data))
	assert.Empty(t, decodeAs[apiList[apiAsset]](e.get(keyBroke, "/assets").expect(http.StatusOK)).Data)
}
