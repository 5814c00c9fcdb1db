package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAssetCodecRoundTrip(t *testing.T) {
	for _, a := range []Asset{
		{},
		{ID: 1<<63 + 5, WorkspaceID: 2, JobID: 3, ProjectID: 4, Source: SourceGeneration, Kind: KindVideo, Status: StatusFailed,
			Model: "veo-3-fast", Title: "ünïcode title", Prompt: "a prompt [mock:fail]", Credits: -7, MimeType: "video/mp4",
			Width: 1920, Height: 1080, DurationSeconds: 8, CreatedAt: -12345,
			Media: &Media{AspectRatio: "16:9", Resolution: "1080p", Voice: "ava", Language: "pt-BR", Audio: true, Index: 3, SourceAsset: 9},
			Error: &Problem{Code: "provider_error", Message: "boom"}},
		{ID: 7, Kind: KindImage, Media: &Media{}},
	} {
		var got Asset
		require.NoError(t, decodeAsset(encodeAsset(&a), &got))
		assert.Equal(t, a, got)
	}
}

func TestAssetCodecRejectsDamage(t *testing.T) {
	data := encodeAsset(&Asset{ID: 1, Prompt: "hello", Media: &Media{AspectRatio: "1:1"}})
	for n := 0; n < len(data); n++ {
		var a Asset
		assert.Error(t, decodeAsset(data[:n], &a), "truncated at %d", n)
	}
	var a Asset
	assert.Error(t, decodeAsset(append([]byte{9}, data[1:]...), &a), "another version")
}

func FuzzAssetCodec(f *testing.F) {
	f.Add(encodeAsset(&Asset{ID: 1, Prompt: "x", Error: &Problem{Code: "c"}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Asset
		if decodeAsset(data, &a) == nil {
			var b Asset
			require.NoError(t, decodeAsset(encodeAsset(&a), &b))
			assert.Equal(t, a, b)
		}
	})
}
