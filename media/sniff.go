package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // register the JPEG header decoder
	_ "image/png"  // register the PNG header decoder

	_ "golang.org/x/image/webp" // register the WEBP header decoder
)

// Info is what the header of an image says.
type Info struct {
	MimeType string
	Width    int
	Height   int
}

// Errors of Sniff.
var (
	ErrUnsupported = errors.New("not a JPEG, PNG or WEBP image")
	ErrCorrupt     = errors.New("the image header is damaged")
)

// MaxPixels is the largest image Sniff accepts: a header may claim any size,
// and an image beyond this is implausible for an upload.
const MaxPixels = 100_000_000

// MaxSide is the longest side Sniff accepts, in pixels.
const MaxSide = 20_000

// Sniff detects the type of an image from its magic numbers and reads its
// size from the header only: no pixels are decoded, so a small file that
// declares a huge size costs nothing (and is rejected).
func Sniff(data []byte) (Info, error) {
	mime := sniffType(data)
	if mime == "" {
		return Info{}, ErrUnsupported
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Info{MimeType: mime}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Info{MimeType: mime}, fmt.Errorf("%w: it declares %dx%d pixels", ErrCorrupt, cfg.Width, cfg.Height)
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return Info{MimeType: mime, Width: cfg.Width, Height: cfg.Height},
			fmt.Errorf("%w: it declares %dx%d pixels, over the %d px side or %d pixel limit", ErrCorrupt, cfg.Width, cfg.Height, MaxSide, MaxPixels)
	}
	return Info{MimeType: mime, Width: cfg.Width, Height: cfg.Height}, nil
}

// SniffType returns the media type the magic numbers of data announce, or ""
// when they are not those of an image type Sniff accepts.
func SniffType(data []byte) string { return sniffType(data) }

func sniffType(b []byte) string {
	switch {
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return "image/jpeg"
	case len(b) >= 8 && bytes.Equal(b[:8], []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}
