package media

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lookTesseract finds the Tesseract OCR command or skips the test. CI
// installs it (Debian's tesseract-ocr, see .ci/run).
func lookTesseract(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tesseract")
	if err != nil {
		t.Skip("tesseract not found: install Debian's tesseract-ocr to run the OCR checks (CI installs it)")
	}
	return path
}

var dashes = regexp.MustCompile(`[-‐‑‒–—―]+`)

// ocr reads the text of an image file, with runs of dashes made one
// hyphen and runs of spaces one space. psm is Tesseract's page
// segmentation mode: 3 (automatic) for whole pictures, 6 (one block of
// text) for a label cut out of a frame.
func ocr(t *testing.T, tesseract, path, psm string) string {
	t.Helper()
	out, err := exec.Command(tesseract, path, "-", "--psm", psm).Output()
	if err != nil {
		t.Fatalf("tesseract %s: %v", path, err)
	}
	text := dashes.ReplaceAllString(string(out), "-")
	return strings.Join(strings.Fields(text), " ")
}

// TestOCRImages reads the label of generated images back: the asset id
// and the model, whole, from PNGs and a JPEG. The bar is cut out of the
// decoded picture first: Tesseract's page layout analysis takes the
// scene's striped shapes for text.
func TestOCRImages(t *testing.T) {
	tesseract := lookTesseract(t)
	for _, s := range []Spec{
		{MimeType: "image/png", Width: 1024, Height: 1024, Seed: 3, Prompt: "a red fox in the snow",
			Label: Label{ID: "asset 61", Model: "flux-2-pro", Text: "A red fox in fresh snow at the edge of a pine forest, golden hour"}},
		{MimeType: "image/jpeg", Width: 1536, Height: 2048, Seed: 4, Prompt: "a portrait",
			Label: Label{ID: "asset 4096", Model: "seedream-4", Text: "Studio portrait of an old fisherman, soft window light, 85mm"}},
		{MimeType: "image/png", Width: 1344, Height: 768, Seed: 5, Prompt: "wide",
			Label: Label{ID: "asset 7", Model: "imagen-4-ultra", Text: "Watercolour map of an imaginary coastal town"}},
	} {
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		img := decodeImage(t, s.MimeType, data)
		lay, err := layoutLabel(s.Label, stillLabel, s.Width, s.Height, s.Width, "", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		bar := img.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(image.Rect(0, s.Height-lay.mask.h, s.Width, s.Height))
		var buf bytes.Buffer
		if err := png.Encode(&buf, bar); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "label.png")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		text := ocr(t, tesseract, path, "6")
		for _, want := range []string{s.Label.ID, s.Label.Model} {
			if !strings.Contains(text, want) {
				t.Errorf("%s %dx%d: OCR read %q, want it to contain %q", s.MimeType, s.Width, s.Height, text, want)
			}
		}
	}
}

// timecodeRE finds a timecode. The Go fonts' zero has a slash inside,
// which Tesseract reads as Q (or O, or @) when it starts a word, so those
// count as zeros in its number fields (see digits).
var timecodeRE = regexp.MustCompile(`([\dOQ@]{2}):([\dOQ@]{2})\.([\dOQ@]) frame ([\dOQ@]+)`)

// digits reads a number field of a timecode.
func digits(s string) int {
	n, _ := strconv.Atoi(strings.NewReplacer("O", "0", "Q", "0", "@", "0").Replace(s))
	return n
}

// TestOCRVideoFrames extracts one frame a second from a labelled video
// with FFmpeg and reads, on each, the asset id, the model and the
// timecode, which must say the frame's time and number.
func TestOCRVideoFrames(t *testing.T) {
	tesseract := lookTesseract(t)
	_, ffmpeg := lookFFmpeg(t)
	s := Spec{MimeType: "video/mp4", Width: 1920, Height: 1080, DurationSeconds: 4, Seed: 8, Prompt: "lighthouse",
		Label: Label{ID: "asset 62", Model: "veo-3.1", Text: "Slow dolly-in on a lighthouse at dusk, waves breaking on the rocks below"}}
	data, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	video := filepath.Join(dir, "v.mp4")
	if err := os.WriteFile(video, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Frames 0, 10, 20, 30 (one a second), the bottom third (the label),
	// enlarged twice as OCR likes it.
	cmd := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", video,
		"-vf", `select=not(mod(n\,10)),crop=iw:ih/3:0:ih*2/3,scale=iw*2:ih*2`, "-fps_mode", "passthrough",
		filepath.Join(dir, "f%d.png"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	last := -1
	for sec := 0; sec < s.DurationSeconds; sec++ {
		text := ocr(t, tesseract, filepath.Join(dir, "f"+strconv.Itoa(sec+1)+".png"), "6")
		for _, want := range []string{s.Label.ID, s.Label.Model} {
			if !strings.Contains(text, want) {
				t.Errorf("second %d: OCR read %q, want it to contain %q", sec, text, want)
			}
		}
		m := timecodeRE.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("second %d: no timecode in %q", sec, text)
			continue
		}
		mm, ss, tenths, frame := digits(m[1]), digits(m[2]), digits(m[3]), digits(m[4])
		if got := (mm*60+ss)*10 + tenths; got != sec*10 || frame != sec*videoFPS {
			t.Errorf("second %d: timecode %q, want %s", sec, m[0], timecode(sec*videoFPS, videoFPS))
		}
		if frame <= last {
			t.Errorf("second %d: frame %d after %d", sec, frame, last)
		}
		last = frame
	}
}
