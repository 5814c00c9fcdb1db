package media

import "testing"

func benchmarkGenerate(b *testing.B, s Spec) {
	b.Helper()
	s.Seed, s.Prompt = 1, "a benchmark of generated media"
	// The label every file the server makes carries (drawn on pictures,
	// written in names and tags).
	s.Label = Label{ID: "asset 61", Model: "flux-2-pro", Text: "Cinematic photo of a red fox in fresh snow at the edge of a pine forest, golden hour light, shallow depth of field"}
	data, err := Generate(s)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Generate(s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "file-bytes")
}

func BenchmarkPNG1024(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "image/png", Width: 1024, Height: 1024})
}

func BenchmarkPNG2048(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "image/png", Width: 2048, Height: 2048})
}

func BenchmarkJPEG1024(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "image/jpeg", Width: 1024, Height: 1024})
}

func BenchmarkJPEG1536x2048(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "image/jpeg", Width: 1536, Height: 2048})
}

func BenchmarkMP4_1920x1080_8s(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "video/mp4", Width: 1920, Height: 1080, DurationSeconds: 8})
}

func BenchmarkMP4_720x1280_6s(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "video/mp4", Width: 720, Height: 1280, DurationSeconds: 6})
}

func BenchmarkWAV60sVoice(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "audio/wav", DurationSeconds: 60, Voice: true})
}

func BenchmarkWAV60sMusic(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "audio/wav", DurationSeconds: 60})
}

func BenchmarkGLB(b *testing.B) {
	benchmarkGenerate(b, Spec{MimeType: "model/gltf-binary"})
}

// The dashboard's previews (drawn on first request and kept).

func BenchmarkPoster1080p(b *testing.B) {
	s := Spec{MimeType: "video/mp4", Width: 1920, Height: 1080, DurationSeconds: 8, Seed: 1, Prompt: "a benchmark of generated media",
		Label: Label{ID: "asset 61", Model: "veo-3.1", Text: "Slow dolly-in on an old lighthouse on a quiet beach at dawn, golden hour light"}}
	for b.Loop() {
		if _, err := Poster(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWaveform60s(b *testing.B) {
	wav, err := Generate(Spec{MimeType: "audio/wav", DurationSeconds: 60, Voice: true, Seed: 1, Prompt: "a benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Waveform(wav, Label{ID: "asset 64", Model: "eleven-v3", Text: "Welcome back."}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkModelPreview(b *testing.B) {
	for b.Loop() {
		if _, err := ModelPreview(Spec{MimeType: "model/gltf-binary", Seed: 1, Prompt: "a teapot", Label: Label{ID: "asset 65", Model: "meshy-5"}}); err != nil {
			b.Fatal(err)
		}
	}
}
