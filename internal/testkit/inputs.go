package testkit

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Picture is a w x h picture of two colour bands, paletted so that
// encoding it stays cheap under the race detector.
func Picture(w, h int) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.NRGBA{200, 40, 40, 255}, color.NRGBA{30, 60, 200, 255}})
	second := bytes.Repeat([]byte{1}, w)
	for y := h / 2; y < h; y++ {
		copy(img.Pix[y*img.Stride:], second)
	}
	return img
}

var pngCache sync.Map // [2]int -> []byte

// PNG is a w x h PNG of Picture: the same bytes for the same size, encoded
// once per test binary. The bytes are shared: do not change them.
func PNG(t testing.TB, w, h int) []byte {
	t.Helper()
	if b, ok := pngCache.Load([2]int{w, h}); ok {
		return b.([]byte)
	}
	var b bytes.Buffer
	require.NoError(t, (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, Picture(w, h)))
	pngCache.Store([2]int{w, h}, b.Bytes())
	return b.Bytes()
}

// DataURI is data as a base64 data: URI of a media type.
func DataURI(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// SyncBuffer is a buffer that goroutines write (a subprocess's log, a
// report) while the test reads it. The zero value is ready to use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
