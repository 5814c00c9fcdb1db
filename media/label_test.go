package media

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

var testLabel = Label{ID: "asset 61", Model: "flux-2-pro", Text: "Cinematic photo of a red fox curled up in fresh snow at the edge of a pine forest, golden hour light, shallow depth of field"}

// TestLabelledDeterministic: a label is part of the Spec, so the same Spec
// gives the same bytes, another label other bytes, for every type.
func TestLabelledDeterministic(t *testing.T) {
	for _, s := range []Spec{
		{MimeType: "image/png", Width: 640, Height: 480},
		{MimeType: "image/jpeg", Width: 480, Height: 640},
		{MimeType: "video/mp4", Width: 320, Height: 240, DurationSeconds: 2, Audio: true},
		{MimeType: "audio/wav", DurationSeconds: 2, Voice: true},
		{MimeType: "model/gltf-binary"},
	} {
		s.Seed, s.Prompt, s.Label = 9, "a fox", testLabel
		a, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Generate(s)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two calls gave different bytes", s.MimeType)
		}
		s.Label.ID = "asset 62"
		if c, _ := Generate(s); bytes.Equal(a, c) {
			t.Errorf("%s: another label gave the same bytes", s.MimeType)
		}
	}
}

// TestLabelEverySize: labels fit or are clipped at any size a Spec allows,
// tiny, odd or huge.
func TestLabelEverySize(t *testing.T) {
	sizes := [][2]int{{1, 1}, {2, 2}, {7, 3}, {16, 16}, {18, 34}, {64, 64}, {100, 30}, {30, 100}, {1000, 2}}
	for _, sz := range sizes {
		for _, m := range []string{"image/png", "image/jpeg", "video/mp4"} {
			s := Spec{MimeType: m, Width: sz[0], Height: sz[1], DurationSeconds: 1, Seed: 1, Prompt: "p", Label: testLabel}
			if m == "video/mp4" && (s.Width%2 != 0 || s.Height%2 != 0) {
				continue
			}
			if _, err := Generate(s); err != nil {
				t.Errorf("%s %dx%d: %v", m, sz[0], sz[1], err)
			}
		}
	}
}

// TestWAVInfo: the label is the WAV's title, in a LIST/INFO chunk after
// the samples, which stay where they were and as they were.
func TestWAVInfo(t *testing.T) {
	s := Spec{MimeType: "audio/wav", DurationSeconds: 3, Voice: true, Seed: 1, Prompt: "hello"}
	plain, _ := Generate(s)
	s.Label = testLabel
	data, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data[44:len(plain)], plain[44:]) || !bytes.Equal(data[8:40], plain[8:40]) {
		t.Fatal("the label changed the samples or the header")
	}
	if got := binary.LittleEndian.Uint32(data[4:]); int(got) != len(data)-8 {
		t.Errorf("RIFF size %d, want %d", got, len(data)-8)
	}
	info := data[len(plain):]
	if string(info[:4]) != "LIST" || string(info[8:12]) != "INFO" || int(binary.LittleEndian.Uint32(info[4:])) != len(info)-8 {
		t.Fatalf("after the data: % x", info[:12])
	}
	if !bytes.Contains(info, []byte("INAM")) || !bytes.Contains(info, []byte(testLabel.String()+"\x00")) {
		t.Errorf("no title %q in %q", testLabel.String(), info)
	}
}

// TestGLBNames: the label names the scene and the node, and is in the
// asset's extras.
func TestGLBNames(t *testing.T) {
	data, err := Generate(Spec{MimeType: "model/gltf-binary", Seed: 2, Prompt: "a teapot", Label: Label{ID: "asset 65", Model: "meshy-5", Text: "Low-poly 3D model of a teapot"}})
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(data[12:])
	var doc struct {
		Asset struct {
			Extras map[string]string `json:"extras"`
		} `json:"asset"`
		Scenes []struct{ Name string } `json:"scenes"`
		Nodes  []struct{ Name string } `json:"nodes"`
	}
	if err := json.Unmarshal(data[20:20+n], &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.Scenes[0].Name, "asset 65 | meshy-5 | Low-poly") || !strings.HasPrefix(doc.Nodes[0].Name, "asset 65  meshy-5 ") {
		t.Errorf("scene %q, node %q", doc.Scenes[0].Name, doc.Nodes[0].Name)
	}
	if doc.Asset.Extras["id"] != "asset 65" || doc.Asset.Extras["model"] != "meshy-5" {
		t.Errorf("extras %v", doc.Asset.Extras)
	}
}

func TestWrapAndTimecode(t *testing.T) {
	f, err := faceOf(false, 20)
	if err != nil {
		t.Fatal(err)
	}
	lines := wrapText(f, testLabel.Text, 300, 2)
	if len(lines) != 2 || !strings.HasSuffix(lines[1], "…") {
		t.Fatalf("wrapped into %q", lines)
	}
	for _, l := range lines {
		if w := f.width(l); w > 300 {
			t.Errorf("line %q is %d px, over 300", l, w)
		}
	}
	if got := wrapText(f, "short", 300, 2); len(got) != 1 || got[0] != "short" {
		t.Errorf("short text wrapped into %q", got)
	}
	for frame, want := range map[int]string{0: "00:00.0  frame 0", 34: "00:03.4  frame 34", 5999: "09:59.9  frame 5999", 6000: "10:00.0  frame 6000"} {
		if got := timecode(frame, 10); got != want {
			t.Errorf("timecode(%d) = %q, want %q", frame, got, want)
		}
	}
}

// TestPreviews: posters are JPEGs of the video's size, waveforms and model
// views PNGs, and they refuse what they cannot draw.
func TestPreviews(t *testing.T) {
	poster, err := Poster(Spec{MimeType: "video/mp4", Width: 720, Height: 1280, DurationSeconds: 5, Seed: 1, Prompt: "p", Label: testLabel})
	if err != nil {
		t.Fatal(err)
	}
	if img := decodeImage(t, "image/jpeg", poster); img.Bounds().Dx() != 720 || img.Bounds().Dy() != 1280 {
		t.Errorf("poster %v", img.Bounds())
	}
	if _, err := Poster(Spec{Width: 721, Height: 1280, DurationSeconds: 5}); err == nil {
		t.Error("a poster of an odd width")
	}
	wav, _ := Generate(Spec{MimeType: "audio/wav", DurationSeconds: 2, Seed: 1, Prompt: "p", Label: testLabel})
	wave, err := Waveform(wav, testLabel)
	if err != nil {
		t.Fatal(err)
	}
	if img := decodeImage(t, "image/png", wave); img.Bounds().Dx() != previewSide {
		t.Errorf("waveform %v", img.Bounds())
	}
	if _, err := Waveform([]byte("RIFF....WAVEjunk"), testLabel); err == nil {
		t.Error("a waveform of no samples")
	}
	view, err := ModelPreview(Spec{MimeType: "model/gltf-binary", Seed: 1, Prompt: "p", Label: testLabel})
	if err != nil {
		t.Fatal(err)
	}
	if img := decodeImage(t, "image/png", view); img.Bounds().Dy() != previewSide {
		t.Errorf("model view %v", img.Bounds())
	}
}

// TestLabelsConcurrently: the server draws files in parallel, sharing the
// fonts' faces and glyph caches.
func TestLabelsConcurrently(t *testing.T) {
	want, _ := Generate(Spec{MimeType: "image/png", Width: 300, Height: 200, Seed: 1, Prompt: "p", Label: testLabel})
	done := make(chan []byte)
	for i := range 8 {
		go func() {
			out, _ := Generate(Spec{MimeType: "video/mp4", Width: 320, Height: 180 + 2*i, DurationSeconds: 1, Seed: 1, Prompt: "p", Label: testLabel})
			if len(out) == 0 {
				t.Error("no video")
			}
			out, _ = Generate(Spec{MimeType: "image/png", Width: 300, Height: 200, Seed: 1, Prompt: "p", Label: testLabel})
			done <- out
		}()
	}
	for range 8 {
		if got := <-done; !bytes.Equal(got, want) {
			t.Error("a picture drawn concurrently differs")
		}
	}
}
