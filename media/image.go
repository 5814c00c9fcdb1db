package media

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
)

// jpegQuality is the quality of generated JPEG files.
const jpegQuality = 80

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
	ycc := toYCbCr(img, sc.palette)
	buf.Grow(s.Width*s.Height/8 + 4096)
	if err := jpeg.Encode(&buf, ycc, &jpeg.Options{Quality: jpegQuality}); err != nil {
		return nil, fmt.Errorf("media: encoding a %dx%d JPEG: %w", s.Width, s.Height, err)
	}
	return buf.Bytes(), nil
}

// toYCbCr converts a paletted picture to 4:2:0 YCbCr, the layout the JPEG
// encoder reads fastest. Chroma takes the top-left pixel of each 2x2 block:
// the picture is made of flat areas, so nothing is lost but edge detail.
func toYCbCr(img *image.Paletted, palette []rgb) *image.YCbCr {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := image.NewYCbCr(b, image.YCbCrSubsampleRatio420)
	var ys, cbs, crs [256]uint8
	for i, c := range palette {
		ys[i], cbs[i], crs[i] = color.RGBToYCbCr(c.r, c.g, c.b)
	}
	for y := 0; y < h; y++ {
		src := img.Pix[y*img.Stride : y*img.Stride+w]
		dst := out.Y[y*out.YStride : y*out.YStride+w]
		for x, p := range src {
			dst[x] = ys[p]
		}
		if y%2 == 0 {
			cb := out.Cb[(y/2)*out.CStride:]
			cr := out.Cr[(y/2)*out.CStride:]
			for x := 0; x < w; x += 2 {
				p := src[x]
				cb[x/2], cr[x/2] = cbs[p], crs[p]
			}
		}
	}
	return out
}
