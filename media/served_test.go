package media_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// call makes an API request with the all-scopes test key.
func call(srv *mediamock.Server, method, path, body string) map[string]any {
	req, _ := http.NewRequest(method, srv.BaseURL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return out
}

// Every completed asset's url serves a real file of the kind, size and
// length the asset claims, checked with real decoders and parsers.
func TestGeneratedFilesAreWhatAssetsClaim(t *testing.T) {
	srv := mediamock.RunT(t)
	tests := []struct {
		name, body string
		check      func(t *testing.T, data []byte, asset map[string]any)
	}{
		{"png image", `{"modality":"image","model_id":"flux-2-pro","prompt":"a red fox","aspect_ratio":"16:9","resolution":"2k"}`, checkImage("png")},
		{"jpeg image", `{"modality":"image","model_id":"seedream-4","prompt":"a blue bird","aspect_ratio":"21:9"}`, checkImage("jpeg")},
		{"video", `{"modality":"video","model_id":"kling-2.5-turbo","prompt":"rain [mock:delay=5]","aspect_ratio":"9:16","resolution":"1080p","duration":10}`, checkMP4},
		{"square video", `{"modality":"video","model_id":"kling-2.5-turbo","prompt":"snow [mock:delay=5]","aspect_ratio":"1:1","duration":5}`, checkMP4},
		{"voice", `{"modality":"audio","model_id":"openai-tts-1","prompt":"Good morning. This is the news at nine, read by a synthetic voice for testing."}`, checkWAV},
		{"music", `{"modality":"audio","track":"music","model_id":"stable-audio-2","prompt":"calm piano","duration":30}`, checkWAV},
		{"3d", `{"modality":"3d","model_id":"meshy-5","prompt":"a teapot [mock:delay=5]"}`, checkGLB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body map[string]any
			withWait := tt.body[:len(tt.body)-1] + `,"wait_seconds":55}`
			gen := call(srv, "POST", "/generations", withWait)
			require.Equal(t, "completed", gen["status"], "%v", gen)
			body = gen["assets"].([]any)[0].(map[string]any)
			data, h := testkit.Fetch(t, srv, body["url"].(string))
			assert.Equal(t, body["mime_type"], h.Get("Content-Type"))
			tt.check(t, data, body)
			again, h2 := testkit.Fetch(t, srv, body["download_url"].(string))
			assert.Equal(t, data, again, "download_url serves the same bytes")
			assert.Contains(t, h2.Get("Content-Disposition"), "attachment")
		})
	}
}

func checkImage(format string) func(*testing.T, []byte, map[string]any) {
	return func(t *testing.T, data []byte, asset map[string]any) {
		t.Helper()
		cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
		require.NoError(t, err)
		assert.Equal(t, format, got)
		assert.EqualValues(t, asset["width"], cfg.Width)
		assert.EqualValues(t, asset["height"], cfg.Height)
		_, _, err = image.Decode(bytes.NewReader(data))
		require.NoError(t, err, "the pixels decode too")
	}
}

// box finds the first box of a type on a path inside ISO BMFF data.
func box(data []byte, path ...string) []byte {
	for _, want := range path {
		found := false
		for len(data) >= 8 {
			size := int(binary.BigEndian.Uint32(data))
			typ := string(data[4:8])
			if size < 8 || size > len(data) {
				return nil
			}
			if typ == want {
				data, found = data[8:size], true
				break
			}
			data = data[size:]
		}
		if !found {
			return nil
		}
	}
	return data
}

func checkMP4(t *testing.T, data []byte, asset map[string]any) {
	t.Helper()
	require.Equal(t, "ftyp", string(data[4:8]))
	mvhd := box(data, "moov", "mvhd")
	require.NotNil(t, mvhd)
	require.Zero(t, mvhd[0], "version 0 mvhd")
	timescale := binary.BigEndian.Uint32(mvhd[12:])
	duration := binary.BigEndian.Uint32(mvhd[16:])
	assert.EqualValues(t, asset["duration_seconds"], float64(duration)/float64(timescale))
	tkhd := box(data, "moov", "trak", "tkhd")
	require.NotNil(t, tkhd)
	w := binary.BigEndian.Uint32(tkhd[76:]) >> 16
	h := binary.BigEndian.Uint32(tkhd[80:]) >> 16
	assert.EqualValues(t, asset["width"], w)
	assert.EqualValues(t, asset["height"], h)
	stsd := box(data, "moov", "trak", "mdia", "minf", "stbl", "stsd")
	require.NotNil(t, stsd)
	assert.Equal(t, "avc1", string(stsd[12:16]), "an H.264 track")
	assert.NotNil(t, box(data, "mdat"))
}

func checkWAV(t *testing.T, data []byte, asset map[string]any) {
	t.Helper()
	require.Equal(t, "RIFF", string(data[0:4]))
	require.Equal(t, "WAVE", string(data[8:12]))
	assert.EqualValues(t, len(data)-8, binary.LittleEndian.Uint32(data[4:]))
	require.Equal(t, "fmt ", string(data[12:16]))
	assert.EqualValues(t, 1, binary.LittleEndian.Uint16(data[20:]), "PCM")
	byteRate := binary.LittleEndian.Uint32(data[28:])
	require.Equal(t, "data", string(data[36:40]))
	size := binary.LittleEndian.Uint32(data[40:])
	require.LessOrEqual(t, 44+int(size), len(data))
	assert.InDelta(t, asset["duration_seconds"], float64(size)/float64(byteRate), 1e-9)
	// After the samples, a LIST/INFO chunk titles the file with its label.
	info := data[44+size:]
	require.GreaterOrEqual(t, len(info), 12, "a LIST/INFO chunk after the data")
	assert.Equal(t, "LIST", string(info[:4]))
	assert.EqualValues(t, len(info)-8, binary.LittleEndian.Uint32(info[4:]))
	assert.Equal(t, "INFO", string(info[8:12]))
	assert.Contains(t, string(info), fmt.Sprintf("asset %v | ", asset["id"]))
}

func checkGLB(t *testing.T, data []byte, _ map[string]any) {
	t.Helper()
	require.Equal(t, "glTF", string(data[0:4]))
	assert.EqualValues(t, 2, binary.LittleEndian.Uint32(data[4:]))
	assert.EqualValues(t, len(data), binary.LittleEndian.Uint32(data[8:]))
	jsonLen := binary.LittleEndian.Uint32(data[12:])
	require.Equal(t, "JSON", string(data[16:20]))
	var gltf struct {
		Asset struct {
			Version string `json:"version"`
		} `json:"asset"`
		Meshes  []any `json:"meshes"`
		Buffers []struct {
			ByteLength int `json:"byteLength"`
		} `json:"buffers"`
	}
	require.NoError(t, json.Unmarshal(data[20:20+jsonLen], &gltf))
	assert.Equal(t, "2.0", gltf.Asset.Version)
	assert.NotEmpty(t, gltf.Meshes)
	bin := data[20+jsonLen:]
	assert.Equal(t, "BIN\x00", string(bin[4:8]))
	assert.GreaterOrEqual(t, int(binary.LittleEndian.Uint32(bin)), gltf.Buffers[0].ByteLength)
}

// Encore videos are 9:16 MP4s of the effect's length with a start frame.
func TestEncoreFilesAreReal(t *testing.T) {
	srv := mediamock.RunT(t)
	c := call(srv, "POST", "/encore/creations", `{"effect":"anime-me","character_id":1,"wait_seconds":55}`)
	for c["status"] != "completed" {
		c = call(srv, "GET", fmt.Sprintf("/encore/creations/%v?wait_seconds=55", c["id"]), "")
	}
	video := c["video"].(map[string]any)
	data, _ := testkit.Fetch(t, srv, video["url"].(string))
	checkMP4(t, data, video)
	assert.EqualValues(t, 7, video["duration_seconds"])
	assert.Equal(t, video["width"].(float64)*16, video["height"].(float64)*9, "9:16")
	frame, h := testkit.Fetch(t, srv, c["start_frame_url"].(string))
	assert.Equal(t, "image/jpeg", h.Get("Content-Type"))
	cfg, _, err := image.DecodeConfig(bytes.NewReader(frame))
	require.NoError(t, err)
	assert.Equal(t, 720, cfg.Width)
	assert.Equal(t, 1280, cfg.Height)
}
