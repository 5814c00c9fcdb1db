package media

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
)

// jpegQuality is the quality of generated JPEG files.
const jpegQuality = 80

// ycc converts a colour to JPEG's (JFIF, full range) YCbCr.
func ycc(c rgb) (y, cb, cr uint8) { return color.RGBToYCbCr(c.r, c.g, c.b) }

// pngEncoder favours speed: the pictures are flat, so even the fastest
// deflate level compresses them well.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed}

// generateImage draws the scene of s and encodes it as PNG or JPEG.
func generateImage(s Spec, mime string) ([]byte, error) {
	sc := newScene(s.Seed, s.Prompt)
	pal := make(color.Palette, len(sc.palette))
	for i, c := range sc.palette {
		pal[i] = color.RGBA{c.r, c.g, c.b, 0xFF}
	}
	img := image.NewPaletted(image.Rect(0, 0, s.Width, s.Height), pal)
	sc.render(img.Pix, s.Width, s.Height, s.Width, s.Height, 1, 0, 0, nil)

	var buf bytes.Buffer
	if mime == mimePNG {
		buf.Grow(64 << 10)
		if err := pngEncoder.Encode(&buf, img); err != nil {
			return nil, fmt.Errorf("media: encoding a %dx%d PNG: %w", s.Width, s.Height, err)
		}
		return buf.Bytes(), nil
	}
	return encodeJPEG(img, sc.palette, jpegQuality), nil
}
