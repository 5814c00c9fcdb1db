package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func boolp(v bool) *bool { return &v }

// Northwind Media's fixture library, as the generation rules use it.
const (
	northwindImage uint64 = 59 // completed image
	northwindVideo uint64 = 60 // completed video
	northwindVoice uint64 = 52 // completed voice-over
)

func TestGenerationRequestRules(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, tokBusiness)
	for id, kind := range map[uint64]string{northwindImage: KindImage, northwindVideo: KindVideo, northwindVoice: KindVoice} {
		require.Equal(t, kind, assetOf(t, e, p, id).Kind, "fixture asset %d", id)
	}
	pending := stuckImage(t, e, p)
	png := pngDataURI(t, 64, 64)
	img := []uint64{northwindImage}

	tests := []struct {
		name    string
		req     GenerationRequest
		fields  []string         // the violations, in order; nil when the request is accepted
		allowed map[string][]any // allowed values of some violations
		kind    string           // of the assets of an accepted request
	}{
		// model_id and modality.
		{name: "an image model", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x"}, kind: KindImage},
		{name: "unknown model", req: GenerationRequest{Modality: "image", ModelID: "dall-e-9", Prompt: "x"}, fields: []string{"model_id"},
			allowed: map[string][]any{"model_id": {"flux-2-pro", "imagen-4", "seedream-4"}}},
		{name: "unknown 3d model", req: GenerationRequest{Modality: "3d", ModelID: "imagen", Prompt: "x"}, fields: []string{"model_id"},
			allowed: map[string][]any{"model_id": {"trellis-2", "hunyuan3d-2.1", "meshy-5"}}},
		{name: "model of another modality", req: GenerationRequest{Modality: "video", ModelID: "imagen-4", Prompt: "x"}, fields: []string{"modality"},
			allowed: map[string][]any{"modality": {"image"}}},
		{name: "unknown modality", req: GenerationRequest{Modality: "hologram", ModelID: "meshy-5", Prompt: "x"}, fields: []string{"modality"},
			allowed: map[string][]any{"modality": {"3d"}}},

		// track: audio only, voice by default.
		{name: "audio without a track is voice", req: GenerationRequest{Modality: "audio", ModelID: "openai-tts-1", Prompt: "Hello there."}, kind: KindVoice},
		{name: "voice track", req: GenerationRequest{Modality: "audio", Track: "voice", ModelID: "eleven-multilingual-v2", Prompt: "Hello."}, kind: KindVoice},
		{name: "music track", req: GenerationRequest{Modality: "audio", Track: "music", ModelID: "suno-v4.5", Prompt: "lo-fi beat"}, kind: KindMusic},
		{name: "music model without a track", req: GenerationRequest{Modality: "audio", ModelID: "suno-v4.5", Prompt: "x"}, fields: []string{"track"},
			allowed: map[string][]any{"track": {"music"}}},
		{name: "voice model on the music track", req: GenerationRequest{Modality: "audio", Track: "music", ModelID: "openai-tts-1", Prompt: "x"}, fields: []string{"track"},
			allowed: map[string][]any{"track": {"voice"}}},
		{name: "unknown audio model lists the voice models", req: GenerationRequest{Modality: "audio", ModelID: "bark", Prompt: "x"}, fields: []string{"model_id"},
			allowed: map[string][]any{"model_id": {"eleven-multilingual-v2", "openai-tts-1"}}},
		{name: "unknown music model lists the music models", req: GenerationRequest{Modality: "audio", Track: "music", ModelID: "bark", Prompt: "x"}, fields: []string{"model_id"},
			allowed: map[string][]any{"model_id": {"suno-v4.5", "stable-audio-2"}}},
		{name: "track on an image", req: GenerationRequest{Modality: "image", Track: "voice", ModelID: "imagen-4", Prompt: "x"}, fields: []string{"track"}},

		// count: 1 to 4, images only.
		{name: "four images", req: GenerationRequest{Modality: "image", ModelID: "seedream-4", Prompt: "x", Count: intp(4)}, kind: KindImage},
		{name: "five images", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Count: intp(5)}, fields: []string{"count"},
			allowed: map[string][]any{"count": {1, 2, 3, 4}}},
		{name: "count on a video", req: GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "x", Count: intp(2)}, fields: []string{"count"}},
		{name: "count on 3d", req: GenerationRequest{Modality: "3d", ModelID: "meshy-5", Prompt: "x", Count: intp(1)}, fields: []string{"count"}},
		{name: "no images", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Count: intp(0)}, fields: []string{"count"}},
		{name: "a negative count", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Count: intp(-1)}, fields: []string{"count"}},

		// aspect_ratio and resolution, per model.
		{name: "aspect ratio offered", req: GenerationRequest{Modality: "image", ModelID: "seedream-4", Prompt: "x", AspectRatio: "21:9", Resolution: "2k"}, kind: KindImage},
		{name: "aspect ratio not offered", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", AspectRatio: "21:9"}, fields: []string{"aspect_ratio"},
			allowed: map[string][]any{"aspect_ratio": {"1:1", "3:4", "4:3", "9:16", "16:9"}}},
		{name: "aspect ratio on music", req: GenerationRequest{Modality: "audio", Track: "music", ModelID: "suno-v4.5", Prompt: "x", AspectRatio: "1:1"}, fields: []string{"aspect_ratio"}},
		{name: "image resolution not offered", req: GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x", Resolution: "4k"}, fields: []string{"resolution"},
			allowed: map[string][]any{"resolution": {"1k", "2k"}}},
		{name: "video resolution not offered", req: GenerationRequest{Modality: "video", ModelID: "sora-2", Prompt: "x", Resolution: "1080p"}, fields: []string{"resolution"},
			allowed: map[string][]any{"resolution": {"720p"}}},
		{name: "resolution on 3d", req: GenerationRequest{Modality: "3d", ModelID: "meshy-5", Prompt: "x", Resolution: "1k"}, fields: []string{"resolution"}},

		// duration, per model.
		{name: "video duration offered", req: GenerationRequest{Modality: "video", ModelID: "kling-2.5-turbo", Prompt: "x", Duration: intp(10)}, kind: KindVideo},
		{name: "video duration not offered", req: GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "x", Duration: intp(5)}, fields: []string{"duration"},
			allowed: map[string][]any{"duration": {4, 6, 8}}},
		{name: "music duration not offered", req: GenerationRequest{Modality: "audio", Track: "music", ModelID: "stable-audio-2", Prompt: "x", Duration: intp(60)},
			fields: []string{"duration"}, allowed: map[string][]any{"duration": {10, 30, 45}}},
		{name: "duration on an image", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Duration: intp(4)}, fields: []string{"duration"}},
		{name: "duration on voice", req: GenerationRequest{Modality: "audio", ModelID: "openai-tts-1", Prompt: "x", Duration: intp(10)}, fields: []string{"duration"}},

		// generate_audio, where the model has native audio.
		{name: "native audio", req: GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "x", GenerateAudio: boolp(true)}, kind: KindVideo},
		{name: "no audio without native audio", req: GenerationRequest{Modality: "video", ModelID: "kling-2.5-turbo", Prompt: "x", GenerateAudio: boolp(false)}, kind: KindVideo},
		{name: "audio without native audio", req: GenerationRequest{Modality: "video", ModelID: "kling-2.5-turbo", Prompt: "x", GenerateAudio: boolp(true)},
			fields: []string{"generate_audio"}, allowed: map[string][]any{"generate_audio": {false}}},
		{name: "generate_audio on an image", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", GenerateAudio: boolp(false)}, fields: []string{"generate_audio"}},

		// voice and language, per model and voice.
		{name: "voice and language", req: GenerationRequest{Modality: "audio", ModelID: "eleven-multilingual-v2", Prompt: "Hola.", Voice: "mia", Language: "es"}, kind: KindVoice},
		{name: "voice not offered", req: GenerationRequest{Modality: "audio", ModelID: "eleven-multilingual-v2", Prompt: "x", Voice: "alloy"}, fields: []string{"voice"},
			allowed: map[string][]any{"voice": {"ava", "noah", "mia", "leo"}}},
		{name: "voice on music", req: GenerationRequest{Modality: "audio", Track: "music", ModelID: "suno-v4.5", Prompt: "x", Voice: "ava"}, fields: []string{"voice"}},
		{name: "voice on video", req: GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "x", Voice: "ava"}, fields: []string{"voice"}},
		{name: "language not offered", req: GenerationRequest{Modality: "audio", ModelID: "openai-tts-1", Prompt: "x", Language: "fr"}, fields: []string{"language"},
			allowed: map[string][]any{"language": {"en"}}},
		{name: "language the voice does not speak", req: GenerationRequest{Modality: "audio", ModelID: "eleven-multilingual-v2", Prompt: "x", Voice: "noah", Language: "fr"},
			fields: []string{"language"}, allowed: map[string][]any{"language": {"en", "de", "it"}}},

		// Reference images: completed images of the workspace, per model.
		{name: "a reference asset", req: GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x", ReferenceAssetIDs: img}, kind: KindImage},
		{name: "four references of both kinds", req: GenerationRequest{Modality: "3d", ModelID: "hunyuan3d-2.1", Prompt: "x",
			ReferenceAssetIDs: []uint64{northwindImage, 57}, ReferenceImageURLs: []string{png, "https://images.example.com/side.jpg"}}, kind: KindModel3D},
		{name: "required reference given", req: GenerationRequest{Modality: "video", ModelID: "kling-2.5-i2v", Prompt: "x", ReferenceImageURLs: []string{png}}, kind: KindVideo},
		{name: "required reference missing (video)", req: GenerationRequest{Modality: "video", ModelID: "kling-2.5-i2v", Prompt: "x"}, fields: []string{"reference_asset_ids"}},
		{name: "required reference missing (3d)", req: GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x"}, fields: []string{"reference_asset_ids"}},
		{name: "references to a model that takes none", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", ReferenceAssetIDs: img},
			fields: []string{"reference_asset_ids"}},
		{name: "reference urls to a model that takes none", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", ReferenceImageURLs: []string{png}},
			fields: []string{"reference_image_urls"}},
		{name: "more references than the model takes", req: GenerationRequest{Modality: "image", ModelID: "seedream-4", Prompt: "x",
			ReferenceAssetIDs: []uint64{northwindImage}, ReferenceImageURLs: []string{png, png}}, fields: []string{"reference_asset_ids"}},
		{name: "reference asset not found", req: GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x", ReferenceAssetIDs: []uint64{unknownID}},
			fields: []string{"reference_asset_ids[0]"}},
		{name: "reference asset of another workspace", req: GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x", ReferenceAssetIDs: []uint64{acmeImage}},
			fields: []string{"reference_asset_ids[0]"}},
		{name: "reference asset a video", req: GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x", ReferenceAssetIDs: []uint64{northwindImage, northwindVideo}},
			fields: []string{"reference_asset_ids[1]"}},
		{name: "reference asset a voice-over", req: GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x", ReferenceAssetIDs: []uint64{northwindVoice}},
			fields: []string{"reference_asset_ids[0]"}},
		{name: "reference asset not completed", req: GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x", ReferenceAssetIDs: []uint64{pending}},
			fields: []string{"reference_asset_ids[0]"}},
		{name: "reference url over http", req: GenerationRequest{Modality: "3d", ModelID: "trellis-2", Prompt: "x", ReferenceImageURLs: []string{"http://images.example.com/a.png"}},
			fields: []string{"reference_image_urls[0]"}},
		{name: "reference url a GIF", req: GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x", ReferenceImageURLs: []string{png, gifDataURI(t)}},
			fields: []string{"reference_image_urls[1]"}},

		// prompt: at most 5000 characters.
		{name: "prompt of 5000", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: strings.Repeat("p", 5000)}, kind: KindImage},
		{name: "prompt of 5001", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: strings.Repeat("p", 5001)}, fields: []string{"prompt"}},
		{name: "empty prompt", req: GenerationRequest{Modality: "image", ModelID: "imagen-4"}, fields: []string{"prompt"}},

		{name: "every option rule at once", req: GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Count: intp(5), AspectRatio: "2:1",
			Resolution: "8k", Duration: intp(4), GenerateAudio: boolp(true), Voice: "ava", Language: "en", ReferenceAssetIDs: img},
			fields: []string{"count", "aspect_ratio", "resolution", "duration", "generate_audio", "voice", "language", "reference_asset_ids"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := balanceOf(t, e, p.WorkspaceID)
			g, err := e.CreateGeneration(context.Background(), p, tt.req)
			if tt.fields != nil {
				vs := requireViolations(t, err, tt.fields...)
				for _, v := range vs {
					if allowed, ok := tt.allowed[v.Field]; ok {
						assert.Equal(t, allowed, v.Allowed, "allowed values of %s", v.Field)
					}
				}
				assert.Equal(t, before, balanceOf(t, e, p.WorkspaceID), "nothing charged")
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, g.Assets)
			for _, a := range g.Assets {
				assert.Equal(t, tt.kind, a.Kind)
				assert.Equal(t, tt.req.ModelID, a.Model)
			}
			if tt.req.Count != nil {
				assert.Len(t, g.Assets, *tt.req.Count)
			}
			assert.Equal(t, before-g.CreditsCharged, g.CreditsBalance)
		})
	}
	checkLedger(t, e, p.WorkspaceID)
}

func TestGenerationDefaultsFromTheModel(t *testing.T) {
	e := newEngine(t, engineOpts{})
	tests := []struct {
		name string
		req  GenerationRequest
		want resolved
	}{
		{"image", GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x"},
			resolved{count: 1, aspect: "1:1", resolution: "1k"}},
		{"video with native audio", GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "x"},
			resolved{count: 1, aspect: "16:9", resolution: "720p", duration: 8, audio: true}},
		{"video without native audio", GenerationRequest{Modality: "video", ModelID: "kling-2.5-turbo", Prompt: "x"},
			resolved{count: 1, aspect: "16:9", resolution: "720p", duration: 5}},
		{"video, audio turned off", GenerationRequest{Modality: "video", ModelID: "sora-2", Prompt: "x", GenerateAudio: boolp(false)},
			resolved{count: 1, aspect: "16:9", resolution: "720p", duration: 4}},
		{"voice, track left out", GenerationRequest{Modality: "audio", ModelID: "eleven-multilingual-v2", Prompt: "x"},
			resolved{count: 1, voice: "ava", language: "en"}},
		{"voice and language chosen", GenerationRequest{Modality: "audio", Track: "voice", ModelID: "eleven-multilingual-v2", Prompt: "x", Voice: "leo", Language: "ja"},
			resolved{count: 1, voice: "leo", language: "ja"}},
		{"music", GenerationRequest{Modality: "audio", Track: "music", ModelID: "suno-v4.5", Prompt: "x"},
			resolved{count: 1, duration: 30}},
		{"3d", GenerationRequest{Modality: "3d", ModelID: "meshy-5", Prompt: "x"},
			resolved{count: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, v := e.checkGeneration(tt.req)
			require.Empty(t, v)
			require.NotNil(t, r.model)
			assert.Equal(t, tt.req.ModelID, r.model.ID)
			r.model, r.prompt = nil, ""
			assert.Equal(t, tt.want, r)
		})
	}
}
