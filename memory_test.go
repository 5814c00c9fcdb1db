package mediamock_test

import (
	"bytes"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// bigPNG is a PNG of about size bytes: a small image padded with a chunk
// the decoders skip.
func bigPNG(t testing.TB, size int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, 64, 64))))
	data := b.Bytes()
	end := bytes.LastIndex(data, []byte("IEND")) - 4
	pad := make([]byte, size-len(data)-12)
	chunk := append([]byte{byte(len(pad) >> 24), byte(len(pad) >> 16), byte(len(pad) >> 8), byte(len(pad))}, []byte("teXt")...)
	chunk = append(append(chunk, pad...), 0, 0, 0, 0) // the CRC is not checked for ancillary chunks here
	return append(append(append([]byte{}, data[:end]...), chunk...), data[end:]...)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// Finished uploads leave nothing behind: after 32 concurrent uploads of
// about 10 MiB, the heap comes back near where it was.
func TestUploadsLeaveNoMemoryBehind(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithLogger(nil))
	h := srv.Handler()
	img := bigPNG(t, 10<<20-100<<10)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "big.png")
	part.Write(img)
	mw.Close()
	form, ctype := body.Bytes(), mw.FormDataContentType()

	before := heapInUse()
	var peak uint64
	var peakMu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", "/api/v1/uploads", bytes.NewReader(form))
			req.Header.Set("Authorization", "Bearer "+mediamock.KeyBusiness)
			req.Header.Set("Content-Type", ctype)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, http.StatusCreated, rec.Code, "%.300s", rec.Body)
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peakMu.Lock()
			peak = max(peak, m.HeapInuse)
			peakMu.Unlock()
		}()
	}
	wg.Wait()
	after := heapInUse()
	retained := int64(after) - int64(before)
	t.Logf("heap in use: before %d MB, peak seen %d MB, after GC %d MB (retained %+d MB) for 32 uploads of %d MB",
		before>>20, peak>>20, after>>20, retained>>20, len(img)>>20)
	assert.Less(t, retained, int64(20<<20), "retained after GC")
}
