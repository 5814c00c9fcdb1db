package contract_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// Each POST operation declares 413 and 415 (and 400 invalid_json): the
// pipeline answers them before the operation runs, the same way for each.
func TestPostOperationsRefuseBadBodies(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *mediamock.Options) { o.MaxBodyBytes = 2 << 10 })
	big := strings.Repeat("x", 4<<10)
	tests := []struct {
		path     string
		valid    map[string]any
		oversize map[string]any
		accepts  []string
	}{
		{"/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "ok"},
			map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": big}, []string{"application/json"}},
		{"/uploads", map[string]any{"image_url": testkit.DataURI("image/png", testkit.PNG(t, 2, 2))},
			map[string]any{"image_url": "data:image/png;base64," + big}, []string{"application/json", "multipart/form-data"}},
		{"/encore/creations", map[string]any{"effect": "golden-hour", "character_id": 1},
			map[string]any{"effect": "golden-hour", "image_url": "data:image/png;base64," + big}, []string{"application/json"}},
		{"/social/publications", map[string]any{"asset_ids": []int{1}, "caption": "ok", "platforms": []string{"instagram"}},
			map[string]any{"asset_ids": []int{1}, "caption": big, "platforms": []string{"instagram"}}, []string{"application/json"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e := e.sub(t)
			for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml"} {
				res := e.call(req{method: http.MethodPost, path: tt.path, token: keyAll, body: tt.valid, contentType: ct}).
					expect(http.StatusUnsupportedMediaType, "unsupported_media_type")
				assert.ElementsMatch(t, toAny(tt.accepts), res.errorDetails()["accepted"], "the accepted types")
			}
			e.post(keyAll, tt.path, tt.oversize).expect(http.StatusRequestEntityTooLarge, "payload_too_large")
			e.call(req{method: http.MethodPost, path: tt.path, token: keyAll, body: []byte(`{"caption": "unterminated`)}).expect(http.StatusBadRequest, "invalid_json")
			e.post(keyAll, tt.path, tt.valid).expect(http.StatusCreated)
			// Media type parameters and letter case do not matter.
			for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
				e.call(req{method: http.MethodPost, path: tt.path, token: keyAll, body: tt.valid, contentType: ct}).expect(http.StatusCreated)
			}
		})
	}
}

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
