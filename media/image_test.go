package media

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

func decodeImage(t *testing.T, mime string, data []byte) image.Image {
	t.Helper()
	var img image.Image
	var err error
	switch mime {
	case "image/png":
		img, err = png.Decode(bytes.NewReader(data))
	case "image/jpeg":
		img, err = jpeg.Decode(bytes.NewReader(data))
	default:
		t.Fatalf("no decoder for %s", mime)
	}
	if err != nil {
		t.Fatalf("decoding the %s: %v", mime, err)
	}
	return img
}

func TestImageSizes(t *testing.T) {
	sizes := []struct{ w, h int }{
		{1, 1}, {2, 3}, {17, 33}, {640, 480}, {480, 640}, {1024, 1024}, {1920, 1080}, {2048, 2048}, {4096, 1024},
	}
	for _, mime := range []string{"image/png", "image/jpeg"} {
		for _, sz := range sizes {
			s := Spec{MimeType: mime, Width: sz.w, Height: sz.h, Seed: 1, Prompt: "a lighthouse at night"}
			data, err := Generate(s)
			if err != nil {
				t.Fatalf("%s %dx%d: %v", mime, sz.w, sz.h, err)
			}
			img := decodeImage(t, mime, data)
			if b := img.Bounds(); b.Dx() != sz.w || b.Dy() != sz.h {
				t.Errorf("%s: decoded %dx%d, want %dx%d", mime, b.Dx(), b.Dy(), sz.w, sz.h)
			}
			info, err := Sniff(data)
			if err != nil || info.MimeType != mime || info.Width != sz.w || info.Height != sz.h {
				t.Errorf("Sniff = %+v, %v; want %s %dx%d", info, err, mime, sz.w, sz.h)
			}
			if sz.w == 2048 && sz.h == 2048 && len(data) > 300_000 {
				t.Errorf("%s 2048x2048 is %d bytes, want under 300 kB", mime, len(data))
			}
		}
	}
}

// differing returns the share of pixels whose colours differ clearly.
func differing(a, b image.Image) float64 {
	bd := a.Bounds()
	n := 0
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			d := absInt(int(r1>>8)-int(r2>>8)) + absInt(int(g1>>8)-int(g2>>8)) + absInt(int(b1>>8)-int(b2>>8))
			if d > 48 {
				n++
			}
		}
	}
	return float64(n) / float64(bd.Dx()*bd.Dy())
}

func TestImageDeterministicAndDistinct(t *testing.T) {
	for _, mime := range []string{"image/png", "image/jpeg"} {
		base := Spec{MimeType: mime, Width: 320, Height: 200, Seed: 9, Prompt: "a red bicycle"}
		a, err := Generate(base)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Generate(base)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, again) {
			t.Errorf("%s: the same spec gave different bytes", mime)
		}
		imgA := decodeImage(t, mime, a)
		for _, other := range []Spec{
			{MimeType: mime, Width: 320, Height: 200, Seed: 9, Prompt: "a blue boat"},
			{MimeType: mime, Width: 320, Height: 200, Seed: 9, Prompt: "a red bicycle!"},
			{MimeType: mime, Width: 320, Height: 200, Seed: 10, Prompt: "a red bicycle"},
		} {
			b, err := Generate(other)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(a, b) {
				t.Errorf("%s: %q seed %d gave the same bytes as %q seed %d", mime, other.Prompt, other.Seed, base.Prompt, base.Seed)
				continue
			}
			if share := differing(imgA, decodeImage(t, mime, b)); share < 0.2 {
				t.Errorf("%s: %q seed %d differs from %q seed %d in only %.0f%% of the pixels", mime, other.Prompt, other.Seed, base.Prompt, base.Seed, 100*share)
			}
		}
	}
}

// TestImageMatchesScene checks the PNG holds exactly the scene's palette
// colours.
func TestImageMatchesScene(t *testing.T) {
	s := Spec{MimeType: "image/png", Width: 300, Height: 170, Seed: 4, Prompt: "shapes"}
	data, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	img := decodeImage(t, s.MimeType, data)
	pal, ok := img.(*image.Paletted)
	if !ok {
		t.Fatalf("decoded a %T, want a paletted PNG", img)
	}
	sc := newScene(s.Seed, s.Prompt)
	want := make([]uint8, s.Width*s.Height)
	sc.render(want, s.Width, s.Height, s.Width, s.Height, 1, 0, 0, nil)
	if !bytes.Equal(pal.Pix, want) {
		t.Error("the PNG pixels are not the scene")
	}
	used := map[uint8]bool{}
	for _, p := range pal.Pix {
		used[p] = true
	}
	if len(used) < 8 {
		t.Errorf("only %d colours used", len(used))
	}
}

// TestJPEGAccuracy decodes generated JPEGs and compares them with the
// scene they encode, and with what image/jpeg makes of the same picture at
// the same quality: the fast encoder must be as faithful.
func TestJPEGAccuracy(t *testing.T) {
	for i, sz := range []struct{ w, h int }{{1, 1}, {7, 5}, {16, 16}, {33, 17}, {640, 480}, {1536, 2048}, {1001, 999}} {
		s := Spec{MimeType: "image/jpeg", Width: sz.w, Height: sz.h, Seed: uint64(i), Prompt: "accuracy"}
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		sc := newScene(s.Seed, s.Prompt)
		pal := make(color.Palette, len(sc.palette))
		for i, c := range sc.palette {
			pal[i] = color.RGBA{c.r, c.g, c.b, 0xFF}
		}
		src := image.NewPaletted(image.Rect(0, 0, sz.w, sz.h), pal)
		sc.render(src.Pix, sz.w, sz.h, sz.w, sz.h, 1, 0, 0, nil)
		var ref bytes.Buffer
		if err := jpeg.Encode(&ref, src, &jpeg.Options{Quality: jpegQuality}); err != nil {
			t.Fatal(err)
		}
		meanError := func(data []byte) float64 {
			img := decodeImage(t, s.MimeType, data)
			sum := 0
			for y := 0; y < sz.h; y++ {
				for x := 0; x < sz.w; x++ {
					c := sc.palette[src.Pix[y*src.Stride+x]]
					r, g, b, _ := img.At(x, y).RGBA()
					sum += absInt(int(r>>8)-int(c.r)) + absInt(int(g>>8)-int(c.g)) + absInt(int(b>>8)-int(c.b))
				}
			}
			return float64(sum) / float64(3*sz.w*sz.h)
		}
		got, want := meanError(data), meanError(ref.Bytes())
		t.Logf("%dx%d: mean error %.2f per channel (image/jpeg %.2f), %d bytes (image/jpeg %d)", sz.w, sz.h, got, want, len(data), ref.Len())
		if got > want*1.1+0.5 || (sz.w*sz.h >= 640*480 && got > 3) {
			t.Errorf("%dx%d: mean error %.2f per channel, image/jpeg %.2f", sz.w, sz.h, got, want)
		}
		if len(data) > len(ref.Bytes())*11/10+64 {
			t.Errorf("%dx%d: %d bytes, image/jpeg %d", sz.w, sz.h, len(data), len(ref.Bytes()))
		}
	}
}
