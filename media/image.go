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
	colours := sc.palette
	img := image.NewPaletted(image.Rect(0, 0, s.Width, s.Height), nil)
	sc.render(img.Pix, s.Width, s.Height, s.Width, s.Height, 1, 0, 0, nil)
	if !s.Label.empty() {
		lay, err := layoutLabel(s.Label, stillLabel, s.Width, s.Height, s.Width, imageInfo(s, mime), "", 0)
		if err != nil {
			return nil, err
		}
		colours = paintLabel(img, colours, &lay.mask, s.Height-lay.mask.h)
	}
	return encodeStill(img, colours, mime)
}

// imageInfo is the second line of an image's label.
func imageInfo(s Spec, mime string) string {
	kind := "PNG"
	if mime == mimeJPEG {
		kind = "JPEG"
	}
	return fmt.Sprintf("%dx%d  %s", s.Width, s.Height, kind)
}

// paintLabel adds the label's colours to the palette and draws the bar
// (mask) onto img from row top; it returns the palette.
func paintLabel(img *image.Paletted, colours []rgb, m *levelMask, top int) []rgb {
	base := len(colours)
	colours = append(colours[:len(colours):len(colours)], make([]rgb, labelLevels)...)
	for k := 0; k < labelLevels; k++ {
		colours[base+k] = levelColour(k)
	}
	w := img.Rect.Dx()
	for y := max(0, top); y < img.Rect.Dy() && y-top < m.h; y++ {
		dst := img.Pix[y*img.Stride : y*img.Stride+w]
		src := m.pix[(y-top)*m.w:]
		for x := range dst {
			dst[x] = uint8(base) + src[x]
		}
	}
	return colours
}

// encodeStill writes a paletted picture as PNG or JPEG.
func encodeStill(img *image.Paletted, colours []rgb, mime string) ([]byte, error) {
	img.Palette = make(color.Palette, len(colours))
	for i, c := range colours {
		img.Palette[i] = color.RGBA{c.r, c.g, c.b, 0xFF}
	}
	if mime == mimePNG {
		var buf bytes.Buffer
		buf.Grow(64 << 10)
		if err := pngEncoder.Encode(&buf, img); err != nil {
			return nil, fmt.Errorf("media: encoding a %dx%d PNG: %w", img.Rect.Dx(), img.Rect.Dy(), err)
		}
		return buf.Bytes(), nil
	}
	return encodeJPEG(img, colours, jpegQuality), nil
}
