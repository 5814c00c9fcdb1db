package edge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The natural flow: generate an image and use its url as a source, where
// the spec takes image_url or reference_image_urls. The mock reads its own
// files from its state (no fetch), with every check of other sources; a
// file of another workspace is refused like a private address.
func TestOwnFileURLsAreImageSources(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []mediamock.Option
	}{
		{"listen address", nil},
		{"public url", []mediamock.Option{func(o *mediamock.Options) { o.PublicURL = "https://media.example.test" }}},
		{"signed file urls", nil}, // a file_expiry rule makes addresses carry ?expires=&signature=
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := mediamock.RunT(t, tt.opts...)
			if tt.name == "signed file urls" {
				code, body := testkit.Control(t, srv, "POST", "/faults/rules", `{"kind":"file_expiry","ttl_seconds":3600}`)
				require.Equal(t, 201, code, body)
			}
			url := testkit.GeneratedImage(t, srv, mediamock.KeyAllScopes)
			if tt.name == "signed file urls" {
				require.Contains(t, url, "?expires=")
			}

			status, gen, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations",
				fmt.Sprintf(`{"modality":"video","model_id":"kling-2.5-i2v","prompt":"animate it","reference_image_urls":[%q]}`, url))
			assert.Equal(t, 201, status, "image to video: %v", gen)

			status, up, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/uploads", fmt.Sprintf(`{"image_url":%q}`, url))
			assert.Equal(t, 201, status, "upload: %v", up)
			assert.Equal(t, "image/png", up["mime_type"], "the upload is the generated file, read from its bytes")

			status, enc, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/encore/creations",
				fmt.Sprintf(`{"effect":"golden-hour","image_url":%q}`, url))
			assert.Equal(t, 201, status, "encore: %v", enc)

			// The same file, used by another workspace.
			for _, path := range []string{"/uploads", "/encore/creations"} {
				body := fmt.Sprintf(`{"image_url":%q}`, url)
				if path == "/encore/creations" {
					body = fmt.Sprintf(`{"effect":"golden-hour","image_url":%q}`, url)
				}
				status, out, _ := testkit.REST(t, srv, mediamock.KeyBusiness, "POST", path, body)
				assert.Equal(t, 400, status, "%s by another workspace: %v", path, out)
				assert.Contains(t, mustJSON(t, out), "another workspace", path)
			}
			status, out, _ := testkit.REST(t, srv, mediamock.KeyBusiness, "POST", "/generations",
				fmt.Sprintf(`{"modality":"video","model_id":"kling-2.5-i2v","prompt":"animate it","reference_image_urls":[%q]}`, url))
			assert.Equal(t, 400, status, "%v", out)
			assert.Contains(t, mustJSON(t, out), "reference_image_urls[0]")
			assert.Contains(t, mustJSON(t, out), "another workspace")
		})
	}
}

// An own address is checked like any image: a video is not an image, a
// forged token names no file, and an http address of another host is
// still refused by the spec's pattern.
func TestOwnFileURLsAreChecked(t *testing.T) {
	srv := mediamock.RunT(t)
	_, gen, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations",
		`{"modality":"video","model_id":"kling-2.5-turbo","prompt":"rain [mock:delay=5]","duration":5,"wait_seconds":55}`)
	require.Equal(t, "completed", gen["status"], "%v", gen)
	video := gen["assets"].([]any)[0].(map[string]any)["url"].(string)
	image := testkit.GeneratedImage(t, srv, mediamock.KeyAllScopes)
	slash := strings.LastIndex(image, "/")
	forged := image[:slash+1] + "0000000000000000.png"
	tests := []struct {
		name, url, code, text string
	}{
		{"a video", video, "unsupported_image_type", ""},
		{"a forged token", forged, "validation_failed", "must be a public https URL or a data URI"},
		{"another host", "http://images.example.com" + image[strings.Index(image, "/files/"):], "validation_failed", "must be a public https URL or a data URI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/uploads", fmt.Sprintf(`{"image_url":%q}`, tt.url))
			assert.Equal(t, 400, status, "%v", out)
			assert.Equal(t, tt.code, out["error"].(map[string]any)["code"], "%v", out)
			assert.Contains(t, mustJSON(t, out), tt.text)
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}
