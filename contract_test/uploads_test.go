package contract_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// postForm posts a multipart form to /uploads.
func (e *env) postForm(token string, parts ...formPart) *result {
	e.t.Helper()
	body, ct := multipartForm(e.t, parts...)
	return e.call(req{method: http.MethodPost, path: "/uploads", token: token, body: body, contentType: ct})
}

func filePart(data []byte, contentType string) formPart {
	return formPart{name: "file", filename: "photo", contentType: contentType, data: data}
}

func titlePart(title string) formPart { return formPart{name: "title", data: []byte(title)} }

func TestUploadImageTypes(t *testing.T) {
	t.Parallel()
	e := start(t)
	tests := []struct {
		name, mime string
		data       []byte
		w, h       int
	}{
		{"png", "image/png", testkit.PNG(t, 37, 21), 37, 21},
		{"jpeg", "image/jpeg", jpegImage(t, 24, 40), 24, 40},
		{"webp", "image/webp", webpImage(30, 20), 30, 20},
	}
	balance := e.balance(keyAll)
	for _, tt := range tests {
		for _, form := range []string{"json", "multipart"} {
			t.Run(tt.name+" "+form, func(t *testing.T) {
				e := e.sub(t)
				title := fmt.Sprintf("%s upload (%s).%s", strings.ToUpper(tt.name), form, tt.name)
				var res *result
				if form == "json" {
					res = e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI(tt.mime, tt.data), "title": title})
				} else {
					res = e.postForm(keyAll, filePart(tt.data, tt.mime), titlePart(title))
				}
				a := decodeAs[apiAsset](res.expect(http.StatusCreated))
				assert.Equal(t, "asset", a.Object)
				assert.Equal(t, "image", a.Kind)
				assert.Equal(t, "completed", a.Status)
				assert.Equal(t, title, a.Title)
				assert.Zero(t, a.Credits)
				assert.Empty(t, a.Model, "an upload has no model")
				assert.Equal(t, tt.mime, a.MimeType)
				assert.Equal(t, tt.w, a.Width, "from the header")
				assert.Equal(t, tt.h, a.Height)
				parseTime(t, a.CreatedAt)

				file := e.fetch(a.URL).expect(http.StatusOK)
				assert.Equal(t, tt.mime, file.Header.Get("Content-Type"))
				assert.True(t, bytes.Equal(tt.data, file.Body), "the url serves the uploaded bytes")
				dl := e.fetch(a.DownloadURL).expect(http.StatusOK)
				assert.True(t, strings.HasPrefix(dl.Header.Get("Content-Disposition"), "attachment"))
				assert.True(t, bytes.Equal(tt.data, dl.Body))

				// An upload reads as a one-asset generation, and is listed first.
				g := e.generation(keyAll, a.ID)
				assert.Equal(t, "completed", g.Status)
				require.Len(t, g.Assets, 1)
				assert.Equal(t, a, g.Assets[0])
				list := decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets?kind=upload&limit=1").expect(http.StatusOK))
				assert.Equal(t, a.ID, list.Data[0].ID)
			})
		}
	}
	assert.Equal(t, balance, e.balance(keyAll), "uploads are free")
}

func TestUploadWithoutTitleOrCredits(t *testing.T) {
	t.Parallel()
	e := start(t)
	// Uploads are free: a workspace without credits uploads.
	a := decodeAs[apiAsset](e.post(keyBroke, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", testkit.PNG(t, 2, 2))}).expect(http.StatusCreated))
	assert.Equal(t, "completed", a.Status)
	assert.Zero(t, a.Credits)
	assert.Zero(t, e.balance(keyBroke))
	a = decodeAs[apiAsset](e.postForm(keyBroke, filePart(testkit.PNG(t, 3, 3), "application/octet-stream")).expect(http.StatusCreated))
	assert.Equal(t, "image/png", a.MimeType)
	list := decodeAs[apiList[apiAsset]](e.get(keyBroke, "/assets").expect(http.StatusOK))
	assert.Len(t, list.Data, 2)
	// A title of exactly 160 characters is fine.
	long := strings.Repeat("t", 160)
	a = decodeAs[apiAsset](e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", testkit.PNG(t, 2, 2)), "title": long}).expect(http.StatusCreated))
	assert.Equal(t, long, a.Title)
}

func TestUploadMultipartImageURL(t *testing.T) {
	t.Parallel()
	e := start(t)
	png := testkit.PNG(t, 9, 7)
	a := decodeAs[apiAsset](e.postForm(keyAll, formPart{name: "image_url", data: []byte(testkit.DataURI("image/png", png))}, titlePart("form url")).expect(http.StatusCreated))
	assert.Equal(t, "form url", a.Title)
	assert.Equal(t, 9, a.Width)
	assert.Equal(t, png, e.fetch(a.URL).expect(http.StatusOK).Body)
}

func TestUploadFromHTTPSURL(t *testing.T) {
	t.Parallel()
	e := start(t)
	// Offline, an https URL resolves to a deterministic placeholder photo.
	a := decodeAs[apiAsset](e.post(keyAll, "/uploads", map[string]any{"image_url": "https://images.example.com/storefront.jpg", "title": "from the web"}).expect(http.StatusCreated))
	assert.Equal(t, "image", a.Kind)
	assert.Equal(t, "completed", a.Status)
	assert.Zero(t, a.Credits)
	assert.Equal(t, "from the web", a.Title)
	assert.Contains(t, []string{"image/jpeg", "image/png", "image/webp"}, a.MimeType)
	assert.Positive(t, a.Width)
	assert.Positive(t, a.Height)
	assert.NotEmpty(t, a.URL)
}

func TestUploadDetectsTypeFromBytes(t *testing.T) {
	t.Parallel()
	e := start(t)
	png := testkit.PNG(t, 5, 4)
	gif := gifImage(t, 5, 4)
	var made []int64
	t.Run("png declared image/gif", func(t *testing.T) {
		e := e.sub(t)
		a := decodeAs[apiAsset](e.postForm(keyAll, filePart(png, "image/gif"), titlePart("lying")).expect(http.StatusCreated))
		made = append(made, a.ID)
		assert.Equal(t, "image/png", a.MimeType)
		assert.Equal(t, 5, a.Width)
	})
	t.Run("png in a data URI that says jpeg", func(t *testing.T) {
		e := e.sub(t)
		a := decodeAs[apiAsset](e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/jpeg", png)}).expect(http.StatusCreated))
		made = append(made, a.ID)
		assert.Equal(t, "image/png", a.MimeType)
	})
	t.Run("png without a Content-Type on the part", func(t *testing.T) {
		e := e.sub(t)
		a := decodeAs[apiAsset](e.postForm(keyAll, filePart(png, "")).expect(http.StatusCreated))
		made = append(made, a.ID)
		assert.Equal(t, "image/png", a.MimeType)
	})
	t.Run("png declared application/octet-stream", func(t *testing.T) {
		e := e.sub(t)
		a := decodeAs[apiAsset](e.postForm(keyAll, filePart(png, "application/octet-stream")).expect(http.StatusCreated))
		made = append(made, a.ID)
		assert.Equal(t, "image/png", a.MimeType)
	})
	t.Run("gif declared image/png", func(t *testing.T) {
		e := e.sub(t)
		res := e.postForm(keyAll, filePart(gif, "image/png")).expect(http.StatusBadRequest, "unsupported_image_type")
		assert.Contains(t, mustJSON(t, res.errorDetails()), "image/webp", "the accepted types")
	})
	t.Run("gif in a data URI that says png", func(t *testing.T) {
		e := e.sub(t)
		e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", gif)}).expect(http.StatusBadRequest, "unsupported_image_type")
	})
	t.Run("gif as gif", func(t *testing.T) {
		e := e.sub(t)
		e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/gif", gif)}).expect(http.StatusBadRequest, "unsupported_image_type")
	})
	t.Run("not an image", func(t *testing.T) {
		e := e.sub(t)
		e.postForm(keyAll, filePart([]byte("%PDF-1.7 not an image"), "application/octet-stream")).expect(http.StatusBadRequest, "unsupported_image_type")
	})
	t.Run("a damaged png", func(t *testing.T) {
		e := e.sub(t)
		e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", png[:20])}).expect(http.StatusBadRequest, "invalid_image")
	})
	t.Run("a header claiming too many pixels", func(t *testing.T) {
		e := e.sub(t)
		e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", pngHeader(30000, 10))}).expect(http.StatusBadRequest, "invalid_image")
		e.postForm(keyAll, filePart(pngHeader(12000, 12000), "image/png")).expect(http.StatusBadRequest, "invalid_image")
	})
	t.Run("bad data URIs", func(t *testing.T) {
		e := e.sub(t)
		for _, uri := range []string{
			"data:image/png,not-base64-form",
			"data:text/plain;base64,aGVsbG8=",
			"data:image/png;base64,***",
		} {
			e.post(keyAll, "/uploads", map[string]any{"image_url": uri}).expect(http.StatusBadRequest, "invalid_data_uri")
		}
	})
	// Nothing refused was added to the library.
	list := decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets?kind=upload&limit=50").expect(http.StatusOK))
	var found []int64
	for _, a := range list.Data {
		if a.ID > 60 { // past the fixture's assets
			found = append(found, a.ID)
		}
	}
	assert.ElementsMatch(t, made, found)
}

func TestUploadSizeLimit(t *testing.T) {
	t.Parallel()
	e := start(t)
	const limit = 10 << 20
	padded := func(n int) []byte {
		b := make([]byte, n)
		copy(b, testkit.PNG(t, 6, 6)) // a PNG header followed by zeros: the header says 6x6
		return b
	}
	t.Run("file of 10 MiB + 1 byte", func(t *testing.T) {
		e := e.sub(t)
		res := e.postForm(keyAll, filePart(padded(limit+1), "image/png")).expect(http.StatusRequestEntityTooLarge, "file_too_large")
		assert.Equal(t, float64(limit), res.errorDetails()["limit_bytes"])
	})
	t.Run("a body over the server's cap", func(t *testing.T) {
		small := start(t, func(o *mediamock.Options) { o.MaxBodyBytes = 4 << 10 })
		small.postForm(keyAll, filePart(padded(8<<10), "image/png")).expect(http.StatusRequestEntityTooLarge, "payload_too_large")
	})
}

func TestUploadSourceRules(t *testing.T) {
	t.Parallel()
	e := start(t)
	png := testkit.PNG(t, 4, 4)
	tests := []struct {
		name   string
		do     func(e *env) *result
		fields []string
	}{
		{"empty JSON object", func(e *env) *result { return e.post(keyAll, "/uploads", map[string]any{}) }, []string{"image_url"}},
		{"JSON with a title only", func(e *env) *result { return e.post(keyAll, "/uploads", map[string]any{"title": "no image"}) }, []string{"image_url"}},
		{"no body at all", func(e *env) *result { return e.call(req{method: http.MethodPost, path: "/uploads", token: keyAll}) }, []string{"image_url"}},
		{"multipart with a title only", func(e *env) *result { return e.postForm(keyAll, titlePart("no image")) }, []string{"image_url"}},
		{"multipart with an unknown part", func(e *env) *result {
			return e.postForm(keyAll, formPart{name: "photo", filename: "a.png", contentType: "image/png", data: png})
		}, []string{"photo"}},
		{"multipart with a file and an image_url", func(e *env) *result {
			return e.postForm(keyAll, filePart(png, "image/png"), formPart{name: "image_url", data: []byte(testkit.DataURI("image/png", png))})
		}, []string{"file"}},
		{"title of 161 characters (JSON)", func(e *env) *result {
			return e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", png), "title": strings.Repeat("x", 161)})
		}, []string{"title"}},
		{"title of 161 characters (multipart)", func(e *env) *result {
			return e.postForm(keyAll, filePart(png, "image/png"), titlePart(strings.Repeat("x", 161)))
		}, []string{"title"}},
		{"image_url over http", func(e *env) *result {
			return e.post(keyAll, "/uploads", map[string]any{"image_url": "http://example.com/a.png"})
		}, []string{"image_url"}},
		{"unknown JSON field", func(e *env) *result {
			return e.post(keyAll, "/uploads", map[string]any{"image_url": testkit.DataURI("image/png", png), "file": "x"})
		}, []string{"file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.do(e.sub(t)).expectInvalid(tt.fields...)
		})
	}
	t.Run("wrong content type", func(t *testing.T) {
		e := e.sub(t)
		res := e.call(req{method: http.MethodPost, path: "/uploads", token: keyAll, body: png, contentType: "image/png"}).
			expect(http.StatusUnsupportedMediaType, "unsupported_media_type")
		assert.Contains(t, string(res.Body), "multipart/form-data")
	})
	t.Run("malformed JSON", func(t *testing.T) {
		e := e.sub(t)
		e.call(req{method: http.MethodPost, path: "/uploads", token: keyAll, body: []byte(`{"image_url":`)}).expect(http.StatusBadRequest, "invalid_json")
	})
	list := decodeAs[apiList[apiAsset]](e.get(keyAll, "/assets?limit=1").expect(http.StatusOK))
	assert.Equal(t, int64(16), list.Data[0].ID, "nothing was added")
}
