package media

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// lookFFmpeg returns the paths of ffprobe and ffmpeg, or skips the test.
func lookFFmpeg(t *testing.T) (string, string) {
	t.Helper()
	probe, err := exec.LookPath("ffprobe")
	if err != nil {
		t.Skip("ffprobe is not on PATH: skipping the check of generated videos with FFmpeg (install it with: apt-get install -y ffmpeg)")
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg is not on PATH: skipping the check of generated videos with FFmpeg (install it with: apt-get install -y ffmpeg)")
	}
	return probe, ffmpeg
}

type probeResult struct {
	Streams []struct {
		CodecType string `json:"codec_type"`
		CodecName string `json:"codec_name"`
		Profile   string `json:"profile"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		PixFmt    string `json:"pix_fmt"`
		Duration  string `json:"duration"`
		NbFrames  string `json:"nb_frames"`
		FrameRate string `json:"r_frame_rate"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

// TestFFmpeg checks generated videos with ffprobe and decodes them with
// ffmpeg, which must not print a single warning.
func TestFFmpeg(t *testing.T) {
	probe, ffmpeg := lookFFmpeg(t)
	dir := t.TempDir()
	cases := []Spec{
		{Width: 1280, Height: 720, DurationSeconds: 4},
		{Width: 720, Height: 1280, DurationSeconds: 6, Audio: true},
		{Width: 1920, Height: 1080, DurationSeconds: 8, Audio: true},
		{Width: 720, Height: 720, DurationSeconds: 5},
		{Width: 1080, Height: 1920, DurationSeconds: 7},
		{Width: 1280, Height: 720, DurationSeconds: 12, Audio: true},
		{Width: 202, Height: 98, DurationSeconds: 2},
		{Width: 2, Height: 2, DurationSeconds: 1, Audio: true},
		{Width: 3840, Height: 2160, DurationSeconds: 2},
		// Labelled, as the server makes them: I_PCM text macroblocks, a
		// timecode, a key frame every 10 s.
		{Width: 1920, Height: 1080, DurationSeconds: 8, Audio: true, Label: testLabel},
		{Width: 720, Height: 1280, DurationSeconds: 25, Label: testLabel},
		{Width: 202, Height: 98, DurationSeconds: 2, Label: testLabel},
		{Width: 2, Height: 2, DurationSeconds: 1, Audio: true, Label: testLabel},
	}
	for i, s := range cases {
		s.MimeType = "video/mp4"
		s.Seed = uint64(100 + i)
		s.Prompt = fmt.Sprintf("test clip %d", i)
		t.Run(fmt.Sprintf("%dx%d_%ds", s.Width, s.Height, s.DurationSeconds), func(t *testing.T) {
			data, err := Generate(s)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("v%d.mp4", i))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(probe, "-v", "error", "-print_format", "json", "-show_streams", "-show_format", path).CombinedOutput()
			if err != nil {
				t.Fatalf("ffprobe: %v\n%s", err, out)
			}
			var pr probeResult
			if err := json.Unmarshal(out, &pr); err != nil {
				t.Fatalf("ffprobe output: %v\n%s", err, out)
			}
			wantStreams := 1
			if s.Audio {
				wantStreams = 2
			}
			if len(pr.Streams) != wantStreams {
				t.Fatalf("ffprobe sees %d streams, want %d:\n%s", len(pr.Streams), wantStreams, out)
			}
			v := pr.Streams[0]
			if v.CodecType != "video" || v.CodecName != "h264" || v.Width != s.Width || v.Height != s.Height || v.PixFmt != "yuv420p" {
				t.Errorf("video stream %s %s %dx%d %s, want h264 %dx%d yuv420p", v.CodecType, v.CodecName, v.Width, v.Height, v.PixFmt, s.Width, s.Height)
			}
			if v.NbFrames != strconv.Itoa(s.DurationSeconds*videoFPS) || v.FrameRate != fmt.Sprintf("%d/1", videoFPS) {
				t.Errorf("video stream: %s frames at %s fps, want %d at %d", v.NbFrames, v.FrameRate, s.DurationSeconds*videoFPS, videoFPS)
			}
			for _, d := range []string{v.Duration, pr.Format.Duration} {
				if f, err := strconv.ParseFloat(d, 64); err != nil || math.Abs(f-float64(s.DurationSeconds)) > 1e-6 {
					t.Errorf("duration %q, want %d s", d, s.DurationSeconds)
				}
			}
			if s.Audio {
				a := pr.Streams[1]
				if a.CodecType != "audio" || a.CodecName != "aac" {
					t.Errorf("audio stream %s %s, want aac", a.CodecType, a.CodecName)
				}
				if f, err := strconv.ParseFloat(a.Duration, 64); err != nil || math.Abs(f-float64(s.DurationSeconds)) > 1e-6 {
					t.Errorf("audio duration %q, want %d s", a.Duration, s.DurationSeconds)
				}
			}
			t.Logf("ffprobe: %s %s %dx%d %s fps, %s frames, %s s", v.CodecName, v.Profile, v.Width, v.Height, v.FrameRate, v.NbFrames, pr.Format.Duration)

			dec := exec.Command(ffmpeg, "-nostdin", "-v", "warning", "-i", path, "-f", "null", "-")
			msg, err := dec.CombinedOutput()
			if err != nil || len(msg) > 0 {
				t.Errorf("ffmpeg decoding: %v\n%s", err, msg)
			}
		})
	}
}

// TestFFmpegPixels decodes videos to raw YUV and checks every sample
// against the flat macroblock colours the encoder aimed at and, in a
// label, the text samples: this proves the prediction and residual model
// the encoder relies on, next to I_PCM macroblocks too.
func TestFFmpegPixels(t *testing.T) {
	_, ffmpeg := lookFFmpeg(t)
	for _, s := range []Spec{
		{MimeType: "video/mp4", Width: 200, Height: 120, DurationSeconds: 3, Seed: 5, Prompt: "pixels"},
		{MimeType: "video/mp4", Width: 96, Height: 160, DurationSeconds: 2, Seed: 9, Prompt: "more pixels"},
		{MimeType: "video/mp4", Width: 320, Height: 176, DurationSeconds: 2, Seed: 11, Prompt: "a third one"},
		{MimeType: "video/mp4", Width: 320, Height: 176, DurationSeconds: 3, Seed: 11, Prompt: "labelled",
			Label: Label{ID: "asset 7", Model: "veo-3.1", Text: "Slow dolly-in on a lighthouse at dusk"}},
		{MimeType: "video/mp4", Width: 640, Height: 362, DurationSeconds: 2, Seed: 12, Prompt: "labelled too",
			Label: Label{ID: "asset 1234", Model: "kling-2.5", Text: "Handheld tracking shot through a night market, neon signs, light rain"}},
		{MimeType: "video/mp4", Width: 96, Height: 160, DurationSeconds: 2, Seed: 13, Prompt: "labelled and small",
			Label: Label{ID: "asset 8", Model: "m", Text: "tiny"}},
	} {
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "p.mp4")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		raw, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("ffmpeg: %v\n%s", err, stderr.String())
		}
		w, h := s.Width, s.Height
		frameSize := w*h + 2*(w/2)*(h/2)
		frames := s.DurationSeconds * videoFPS
		if len(raw) != frames*frameSize {
			t.Fatalf("decoded %d bytes, want %d frames of %d", len(raw), frames, frameSize)
		}
		sc := newScene(s.Seed, s.Prompt)
		p := newH264Params(w, h, videoFPS)
		grid := make([]uint8, p.mbW*p.mbH)
		palette := sc.palette
		var ov *videoLabel
		if !s.Label.empty() {
			pc := &picture{p: p, colours: make([]yuv, len(palette))}
			if ov, err = newVideoLabel(s, p, pc); err != nil {
				t.Fatal(err)
			}
			palette = append(palette[:len(palette):len(palette)], labelBG)
		}
		moved := false
		var first []byte
		for f := 0; f < frames; f++ {
			sc.render(grid, p.mbW, p.mbH, w, h, 16, f, videoFPS, nil)
			if ov != nil {
				ov.cover(grid)
				ov.frame(&picture{p: p, tile: make([][]byte, len(grid)), prevTile: make([][]byte, ov.dyn.Dx()*ov.dyn.Dy())}, f)
			}
			pic := raw[f*frameSize : (f+1)*frameSize]
			if f == 0 {
				first = pic
			} else if !bytes.Equal(pic, first) {
				moved = true
			}
			bad := 0
			check := func(plane []byte, pw, ph, mbSize int, pick func(yuv) uint8) {
				for y := 0; y < ph; y++ {
					for x := 0; x < pw; x++ {
						want := pick(rgbToYUV(palette[grid[(y/mbSize)*p.mbW+x/mbSize]]))
						if ov != nil && mbSize == 16 && y >= ov.top*16 {
							want = ov.luma[ov.lay.mask.pix[(y-ov.top*16)*ov.lay.mask.w+x]]
						}
						if got := plane[y*pw+x]; got != want {
							if bad < 5 {
								t.Errorf("frame %d: sample (%d,%d) of a %dx%d plane is %d, want %d", f, x, y, pw, ph, got, want)
							}
							bad++
						}
					}
				}
			}
			check(pic[:w*h], w, h, 16, func(c yuv) uint8 { return c.y })
			check(pic[w*h:w*h+(w/2)*(h/2)], w/2, h/2, 8, func(c yuv) uint8 { return c.u })
			check(pic[w*h+(w/2)*(h/2):], w/2, h/2, 8, func(c yuv) uint8 { return c.v })
			if bad > 0 {
				t.Fatalf("frame %d: %d samples differ", f, bad)
			}
		}
		if !moved {
			t.Errorf("%dx%d: the decoded pictures never change", w, h)
		}
	}
}

// TestFFmpegOtherFormats decodes generated WAV, JPEG and PNG files with
// FFmpeg. (FFmpeg warns "EOI missing" on some JPEGs of a few pixels, from
// image/jpeg as well, and "Guessed Channel Layout" on any plain PCM WAV,
// so those are decoded at the error level.)
func TestFFmpegOtherFormats(t *testing.T) {
	probe, ffmpeg := lookFFmpeg(t)
	for i, s := range []Spec{
		{MimeType: "audio/wav", DurationSeconds: 3, Voice: true},
		{MimeType: "audio/wav", DurationSeconds: 3},
		{MimeType: "image/jpeg", Width: 1536, Height: 2048},
		{MimeType: "image/jpeg", Width: 641, Height: 479},
		{MimeType: "image/jpeg", Width: 33, Height: 17},
		{MimeType: "image/png", Width: 1024, Height: 1024},
		{MimeType: "image/png", Width: 3, Height: 5},
	} {
		s.Seed, s.Prompt = uint64(i), "other formats"
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "f"+Extension(s.MimeType))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(probe, "-v", "error", "-print_format", "json", "-show_streams", "-show_format", path).CombinedOutput()
		if err != nil {
			t.Fatalf("ffprobe: %v\n%s", err, out)
		}
		var pr probeResult
		if err := json.Unmarshal(out, &pr); err != nil || len(pr.Streams) != 1 {
			t.Fatalf("ffprobe output: %v\n%s", err, out)
		}
		st := pr.Streams[0]
		switch s.MimeType {
		case "audio/wav":
			if st.CodecName != "pcm_s16le" || st.Duration != "3.000000" {
				t.Errorf("ffprobe: %s, %s s; want pcm_s16le, 3 s", st.CodecName, st.Duration)
			}
		default:
			if st.Width != s.Width || st.Height != s.Height {
				t.Errorf("ffprobe: %s %dx%d, want %dx%d", st.CodecName, st.Width, st.Height, s.Width, s.Height)
			}
		}
		level := "warning"
		if s.MimeType == "audio/wav" || s.Width*s.Height < 4096 {
			level = "error"
		}
		msg, err := exec.Command(ffmpeg, "-nostdin", "-v", level, "-i", path, "-f", "null", "-").CombinedOutput()
		if err != nil || len(msg) > 0 {
			t.Errorf("%s %dx%d: ffmpeg decoding: %v\n%s", s.MimeType, s.Width, s.Height, err, msg)
		}
	}
}

// TestFFmpegRandomMacroblocks encodes random colours on random macroblocks,
// so that the residual levels cover the whole -255..255 range of every
// plane and every prediction mode is used, and checks FFmpeg decodes
// exactly the wanted samples.
func TestFFmpegRandomMacroblocks(t *testing.T) {
	_, ffmpeg := lookFFmpeg(t)
	const w, h, frames = 320, 176, 4
	r := newRNG(1, "random macroblocks", "test")
	p := newH264Params(w, h, videoFPS)
	pc := &picture{p: p, colours: make([]yuv, 256)}
	for i := range pc.colours {
		pc.colours[i] = yuv{uint8(r.intn(256)), uint8(r.intn(256)), uint8(r.intn(256))}
	}
	pc.colours[0] = yuv{0, 0, 0}
	pc.colours[1] = yuv{255, 255, 255}
	grids := make([][]uint8, frames)
	for f := range grids {
		grids[f] = make([]uint8, p.mbW*p.mbH)
		for i := range grids[f] {
			switch {
			case f > 0 && r.intn(3) != 0:
				grids[f][i] = grids[f-1][i] // unchanged: skipped
			case r.intn(4) == 0:
				grids[f][i] = uint8(r.intn(2)) // black or white: extreme levels
			case i > 0 && r.intn(3) == 0:
				grids[f][i] = grids[f][i-1] // runs: zero residuals
			default:
				grids[f][i] = uint8(r.intn(256))
			}
		}
	}
	video := &mp4Track{
		id: 1, handler: "vide", name: "VideoHandler", timescale: videoTimescale, width: w, height: h,
		sampleEntry: avc1Entry(w, h, p.sps(), p.pps()),
		chunkOf:     func(int) int { return 0 },
		sync:        []uint32{1},
	}
	for f, g := range grids {
		var nal []byte
		if f == 0 {
			nal = pc.idr(g, 0)
		} else {
			nal = pc.pFrame(g, grids[f-1], f)
		}
		video.samples = append(video.samples, append(binary.BigEndian.AppendUint32(nil, uint32(len(nal))), nal...))
		video.durations = append(video.durations, videoTimescale/videoFPS)
	}
	// The MP4 declares whole seconds; pad with all-skip frames.
	for len(video.samples) < videoFPS {
		nal := pc.pFrame(grids[frames-1], nil, len(video.samples))
		video.samples = append(video.samples, append(binary.BigEndian.AppendUint32(nil, uint32(len(nal))), nal...))
		video.durations = append(video.durations, videoTimescale/videoFPS)
	}
	data, err := writeMP4([]*mp4Track{video}, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.mp4")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ffmpeg, "-nostdin", "-v", "warning", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg: %v\n%s", err, stderr.String())
	}
	frameSize := w*h + 2*(w/2)*(h/2)
	if len(raw) != videoFPS*frameSize {
		t.Fatalf("decoded %d bytes, want %d frames", len(raw), videoFPS)
	}
	for f := 0; f < videoFPS; f++ {
		g := grids[min(f, frames-1)]
		pic := raw[f*frameSize:]
		bad := 0
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := pc.colours[g[(y/16)*p.mbW+x/16]]
				got := [3]uint8{pic[y*w+x], pic[w*h+(y/2)*(w/2)+x/2], pic[w*h+(w/2)*(h/2)+(y/2)*(w/2)+x/2]}
				if got != [3]uint8{c.y, c.u, c.v} {
					if bad < 5 {
						t.Errorf("frame %d, pixel (%d,%d): decoded YUV %v, want %v", f, x, y, got, c)
					}
					bad++
				}
			}
		}
		if bad > 0 {
			t.Fatalf("frame %d: %d pixels differ", f, bad)
		}
	}
}
