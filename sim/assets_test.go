package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/fixtures"
)

// The kind index of the state file is keyed by tags from the table of
// modalities: every kind of the table has its tag, an asset is indexed under
// its kind's tag and those of the filters that match it, and the tags of
// state files already written keep their values.
func TestKindTagsComeFromTheTable(t *testing.T) {
	for _, k := range fixtures.AssetKinds() {
		assert.NotZero(t, k.Tag, k.Name)
		assert.Equal(t, k.Tag, kindTags[k.Name], k.Name)
		assert.Equal(t, k.Name, kindOfTag[k.Tag], "tag %d", k.Tag)
		want := []byte{k.Tag}
		for _, f := range fixtures.FiltersOf(k.Name) {
			want = append(want, f.Tag)
		}
		assert.Equal(t, want, tagsOf(&Asset{Kind: k.Name, Source: SourceGeneration}), k.Name)
	}
	assert.Len(t, kindTags, len(fixtures.AssetKinds()))
	assert.Nil(t, tagsOf(&Asset{Kind: "hologram"}), "no tag, not tag 0, for a kind the table does not know")

	stored := map[string]byte{"image": 1, "video": 2, "voice": 3, "music": 4, "model3d": 5, "audio": 6, "upload": 7}
	for kind, tag := range stored {
		assert.Equal(t, tag, kindTags[kind], "the stored tag of %s", kind)
	}
	assert.Equal(t, []byte{3, 6}, tagsOf(&Asset{Kind: KindVoice}), "voice is also audio")
	assert.Equal(t, []byte{4, 6}, tagsOf(&Asset{Kind: KindMusic}), "music is also audio")
	assert.Equal(t, []byte{1, 7}, tagsOf(&Asset{Kind: KindImage, Source: SourceUpload}), "an uploaded image is also an upload")

	for _, kind := range []string{KindImage, KindVideo, KindVoice, KindMusic, KindModel3D} {
		_, ok := fixtures.KindNamed(kind)
		assert.True(t, ok, "the constant %s names a kind of the table", kind)
	}
}

// An output's size and length follow the rules of its kind in the table.
func TestOutputsFollowTheRulesOfTheirKind(t *testing.T) {
	e := newEngine(t, engineOpts{})
	for _, m := range e.world.Models {
		k, ok := fixtures.KindOf(m)
		if !assert.True(t, ok, m.ID) {
			continue
		}
		r := resolved{model: &m, aspect: m.Defaults.AspectRatio, resolution: m.Defaults.Resolution, duration: m.Defaults.Duration, prompt: "one two three four five six"}
		var a Asset
		r.fill(&a, 0)
		w, h := k.Pixels.Size(r.aspect, r.resolution)
		assert.Equal(t, k.Name, a.Kind, m.ID)
		assert.Equal(t, [2]int{w, h}, [2]int{a.Width, a.Height}, m.ID)
		assert.Equal(t, k.Length.Seconds(r.duration, r.prompt), a.DurationSeconds, m.ID)
		switch k.Name {
		case KindImage, KindVideo:
			assert.Positive(t, a.Width*a.Height, m.ID)
		case KindVoice:
			assert.Equal(t, SpeechSeconds(r.prompt), a.DurationSeconds, m.ID)
		case KindMusic:
			assert.Equal(t, m.Defaults.Duration, a.DurationSeconds, m.ID)
		}
	}
}

// An asset of a kind the table does not know is refused before anything is
// written: it would be in the library and in no index of kinds.
func TestAnAssetOfAnUnknownKindIsRefused(t *testing.T) {
	e := newEngine(t, engineOpts{})
	before := stateOf(t, e)
	err := e.update(func(t *tx) error {
		return t.insertAsset(&Asset{WorkspaceID: 1, Source: SourceGeneration, Kind: "hologram", Status: StatusCompleted})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"hologram"`)
	assert.Empty(t, before.diff(stateOf(t, e)))
	pg, err := e.ListAssets(principal(t, e, tokAcme), AssetQuery{Kind: "hologram", Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, pg.Data, "a filter by a kind the table does not know finds nothing")
}

// TestSearchTextIsLowerCase: the text index holds what strings.ToLower
// makes of the title and prompt, whatever their letters and bytes.
func TestSearchTextIsLowerCase(t *testing.T) {
	for _, c := range [][2]string{{"", ""}, {"Hello World", "A PROMPT of Lighthouses 123 [@]^_`{"}, {"Élan", "ÀB"},
		{"x", "straße İ"}, {"AZaz@[", "\x7f\x80 invalid"}} {
		want := strings.ToLower(c[0] + "\n" + c[1])
		require.Equal(t, want, string(searchText(&Asset{Title: c[0], Prompt: c[1]})), "%q", c)
	}
}
