package media

import (
	"errors"
	"fmt"
	"strings"
)

// Spec describes one file to generate.
type Spec struct {
	MimeType        string // "image/png", "image/jpeg", "video/mp4", "audio/wav", "model/gltf-binary"
	Width, Height   int    // pixels; images and videos
	DurationSeconds int    // videos, audio
	Seed            uint64 // drives every random choice; same Spec => byte-identical output
	Prompt          string // text the content is derived from; different prompts must look visibly different
	Audio           bool   // video: include an audio track (a silent AAC track, see the package doc)
	Voice           bool   // audio/wav: speech-like (true) or music-like (false) synthesis
	Label           Label  // what the file is, drawn on pictures and written in names and tags; zero: none
}

// Limits of Generate.
const (
	maxSide     = 8192 // pixels, images and videos
	maxDuration = 600  // seconds, videos and audio
)

// Errors of Generate, wrapped with the details of the Spec.
var (
	errUnsupportedType = errors.New("unsupported media type")
	errBadSize         = errors.New("impossible size")
	errBadDuration     = errors.New("impossible duration")
)

// Canonical media types.
const (
	mimePNG  = "image/png"
	mimeJPEG = "image/jpeg"
	mimeWEBP = "image/webp"
	mimeMP4  = "video/mp4"
	mimeWAV  = "audio/wav"
	mimeGLB  = "model/gltf-binary"
)

// canonicalMime lowers the case of a media type, drops its parameters and
// maps the usual aliases to the names Generate and Extension know.
func canonicalMime(m string) string {
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = m[:i]
	}
	m = strings.ToLower(strings.TrimSpace(m))
	switch m {
	case "image/jpg", "image/pjpeg":
		return mimeJPEG
	case "audio/wave", "audio/x-wav", "audio/vnd.wave":
		return mimeWAV
	}
	return m
}

// Generate makes the file described by s. It returns an error (never panics) for unsupported MimeType or
// impossible sizes (width/height <= 0 or > 8192, duration <= 0 or > 600 for time-based media).
// Videos also need an even width and height (H.264 4:2:0 frame cropping works in steps of two pixels).
func Generate(s Spec) (out []byte, err error) {
	defer func() {
		// Generate must never panic: a bug turns into an error.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("media: generating %q: internal error: %v", s.MimeType, r)
		}
	}()
	switch m := canonicalMime(s.MimeType); m {
	case mimePNG, mimeJPEG:
		if err := checkSize(s); err != nil {
			return nil, err
		}
		return generateImage(s, m)
	case mimeMP4:
		if err := checkSize(s); err != nil {
			return nil, err
		}
		if err := checkDuration(s); err != nil {
			return nil, err
		}
		if s.Width%2 != 0 || s.Height%2 != 0 {
			return nil, fmt.Errorf("media: %s of %dx%d pixels: %w: H.264 4:2:0 needs an even width and height", s.MimeType, s.Width, s.Height, errBadSize)
		}
		return generateVideo(s)
	case mimeWAV:
		if err := checkDuration(s); err != nil {
			return nil, err
		}
		return generateWAV(s)
	case mimeGLB:
		return generateGLB(s)
	default:
		return nil, fmt.Errorf("media: %w %q (want image/png, image/jpeg, video/mp4, audio/wav or model/gltf-binary)", errUnsupportedType, s.MimeType)
	}
}

func checkSize(s Spec) error {
	if s.Width <= 0 || s.Height <= 0 || s.Width > maxSide || s.Height > maxSide {
		return fmt.Errorf("media: %s of %dx%d pixels: %w: each side must be 1 to %d pixels", s.MimeType, s.Width, s.Height, errBadSize, maxSide)
	}
	return nil
}

func checkDuration(s Spec) error {
	if s.DurationSeconds <= 0 || s.DurationSeconds > maxDuration {
		return fmt.Errorf("media: %s of %d s: %w: it must be 1 to %d seconds", s.MimeType, s.DurationSeconds, errBadDuration, maxDuration)
	}
	return nil
}

// Extension returns the file extension (with dot) for a mime type: ".png", ".jpg", ".mp4", ".wav", ".glb", ".webp"; "" if unknown.
func Extension(mimeType string) string {
	switch canonicalMime(mimeType) {
	case mimePNG:
		return ".png"
	case mimeJPEG:
		return ".jpg"
	case mimeWEBP:
		return ".webp"
	case mimeMP4:
		return ".mp4"
	case mimeWAV:
		return ".wav"
	case mimeGLB:
		return ".glb"
	}
	return ""
}
