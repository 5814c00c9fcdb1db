package testkit

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// PaddedPNG is a valid PNG of about size bytes: a small image padded with
// an ancillary chunk the decoders skip. It stands for a large upload
// without the cost of encoding a large picture.
func PaddedPNG(t testing.TB, size int) []byte {
	t.Helper()
	data := PNG(t, 64, 64)
	end := bytes.LastIndex(data, []byte("IEND")) - 4
	pad := make([]byte, size-len(data)-12)
	chunk := append([]byte{byte(len(pad) >> 24), byte(len(pad) >> 16), byte(len(pad) >> 8), byte(len(pad))}, []byte("teXt")...)
	chunk = append(append(chunk, pad...), 0, 0, 0, 0) // the CRC is not checked for ancillary chunks here
	return append(append(append([]byte{}, data[:end]...), chunk...), data[end:]...)
}

// UploadForm is a multipart upload (field "file") of a PaddedPNG of about
// size bytes, and its content type.
func UploadForm(t testing.TB, size int) ([]byte, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "big.png")
	require.NoError(t, err)
	_, err = part.Write(PaddedPNG(t, size))
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return body.Bytes(), mw.FormDataContentType()
}

// HeapInUse is the heap in use after two collections: what is retained.
func HeapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// PeakHeap samples the heap in use while f runs and returns the highest
// value seen (sampled every millisecond of f's run, and once at its end).
func PeakHeap(f func()) uint64 {
	var peak atomic.Uint64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		for {
			old := peak.Load()
			if m.HeapInuse <= old || peak.CompareAndSwap(old, m.HeapInuse) {
				return
			}
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	f()
	sample()
	close(done)
	<-stopped
	return peak.Load()
}
