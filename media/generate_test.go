package media

import (
	"bytes"
	"errors"
	"testing"
)

func TestGenerateErrors(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		want error
	}{
		{"gif", Spec{MimeType: "image/gif", Width: 10, Height: 10}, errUnsupportedType},
		{"webp", Spec{MimeType: "image/webp", Width: 10, Height: 10}, errUnsupportedType},
		{"empty type", Spec{Width: 10, Height: 10}, errUnsupportedType},
		{"webm", Spec{MimeType: "video/webm", Width: 10, Height: 10, DurationSeconds: 1}, errUnsupportedType},
		{"png zero width", Spec{MimeType: "image/png", Width: 0, Height: 10}, errBadSize},
		{"png negative height", Spec{MimeType: "image/png", Width: 10, Height: -1}, errBadSize},
		{"jpeg too wide", Spec{MimeType: "image/jpeg", Width: 8193, Height: 10}, errBadSize},
		{"png too tall", Spec{MimeType: "image/png", Width: 10, Height: 1 << 30}, errBadSize},
		{"mp4 zero size", Spec{MimeType: "video/mp4", DurationSeconds: 5}, errBadSize},
		{"mp4 too big", Spec{MimeType: "video/mp4", Width: 8194, Height: 720, DurationSeconds: 5}, errBadSize},
		{"mp4 odd width", Spec{MimeType: "video/mp4", Width: 721, Height: 720, DurationSeconds: 5}, errBadSize},
		{"mp4 odd height", Spec{MimeType: "video/mp4", Width: 720, Height: 1, DurationSeconds: 5}, errBadSize},
		{"mp4 zero duration", Spec{MimeType: "video/mp4", Width: 720, Height: 720}, errBadDuration},
		{"mp4 too long", Spec{MimeType: "video/mp4", Width: 720, Height: 720, DurationSeconds: 601}, errBadDuration},
		{"wav zero duration", Spec{MimeType: "audio/wav"}, errBadDuration},
		{"wav negative duration", Spec{MimeType: "audio/wav", DurationSeconds: -3}, errBadDuration},
		{"wav too long", Spec{MimeType: "audio/wav", DurationSeconds: 601}, errBadDuration},
	}
	for _, c := range cases {
		data, err := Generate(c.spec)
		if !errors.Is(err, c.want) || data != nil {
			t.Errorf("%s: Generate = %d bytes, %v; want error %v", c.name, len(data), err, c.want)
		}
	}
}

func TestGenerateLimitsAccepted(t *testing.T) {
	for _, s := range []Spec{
		{MimeType: "image/png", Width: 8192, Height: 1},
		{MimeType: "image/jpeg", Width: 1, Height: 8192},
		{MimeType: "video/mp4", Width: 8192, Height: 2, DurationSeconds: 1},
		{MimeType: "audio/wav", DurationSeconds: 600},
		{MimeType: "model/gltf-binary", Width: -5, DurationSeconds: -1}, // sizes do not apply
		{MimeType: " Image/PNG ; charset=binary", Width: 3, Height: 3},
		{MimeType: "image/jpg", Width: 3, Height: 3},
		{MimeType: "audio/x-wav", DurationSeconds: 1},
	} {
		if _, err := Generate(s); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// TestGenerateAllKinds checks that every kind is deterministic and depends
// on the prompt and the seed.
func TestGenerateAllKinds(t *testing.T) {
	specs := []Spec{
		{MimeType: "image/png", Width: 64, Height: 48},
		{MimeType: "image/jpeg", Width: 64, Height: 48},
		{MimeType: "video/mp4", Width: 64, Height: 48, DurationSeconds: 2},
		{MimeType: "video/mp4", Width: 64, Height: 48, DurationSeconds: 2, Audio: true},
		{MimeType: "audio/wav", DurationSeconds: 2, Voice: true},
		{MimeType: "audio/wav", DurationSeconds: 2},
		{MimeType: "model/gltf-binary"},
	}
	for _, s := range specs {
		s.Seed, s.Prompt = 77, "an orange cat on a sofa"
		a, err := Generate(s)
		if err != nil {
			t.Fatalf("%s: %v", s.MimeType, err)
		}
		b, _ := Generate(s)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: not deterministic", s.MimeType)
		}
		p := s
		p.Prompt = "a grey dog in the snow"
		if c, _ := Generate(p); bytes.Equal(a, c) {
			t.Errorf("%s: the prompt changes nothing", s.MimeType)
		}
		q := s
		q.Seed++
		if c, _ := Generate(q); bytes.Equal(a, c) {
			t.Errorf("%s: the seed changes nothing", s.MimeType)
		}
	}
}

func TestExtension(t *testing.T) {
	cases := map[string]string{
		"image/png":           ".png",
		"image/jpeg":          ".jpg",
		"image/jpg":           ".jpg",
		"IMAGE/JPEG":          ".jpg",
		"video/mp4":           ".mp4",
		"audio/wav":           ".wav",
		"audio/x-wav":         ".wav",
		"audio/wave":          ".wav",
		"model/gltf-binary":   ".glb",
		"image/webp":          ".webp",
		"image/png; q=0.9":    ".png",
		"image/gif":           "",
		"":                    "",
		"application/json":    "",
		"model/gltf+json":     "",
		"video/mp4\x00\xff\n": "",
	}
	for in, want := range cases {
		if got := Extension(in); got != want {
			t.Errorf("Extension(%q) = %q, want %q", in, got, want)
		}
	}
}
