package media

import (
	"bytes"
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
// against the flat macroblock colours the encoder aimed at: this proves
// the prediction and residual model the encoder relies on.
func TestFFmpegPixels(t *testing.T) {
	_, ffmpeg := lookFFmpeg(t)
	for _, s := range []Spec{
		{MimeType: "video/mp4", Width: 200, Height: 120, DurationSeconds: 3, Seed: 5, Prompt: "pixels"},
		{MimeType: "video/mp4", Width: 96, Height: 160, DurationSeconds: 2, Seed: 9, Prompt: "more pixels"},
		{MimeType: "video/mp4", Width: 320, Height: 176, DurationSeconds: 2, Seed: 11, Prompt: "a third one"},
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
		moved := false
		var first []byte
		for f := 0; f < frames; f++ {
			sc.render(grid, p.mbW, p.mbH, w, h, 16, f, videoFPS, nil)
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
						want := pick(rgbToYUV(sc.palette[grid[(y/mbSize)*p.mbW+x/mbSize]]))
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

// TestFFmpegAudio decodes generated WAV files with ffmpeg.
func TestFFmpegAudio(t *testing.T) {
	probe, _ := lookFFmpeg(t)
	for _, voice := range []bool{true, false} {
		data, err := Generate(Spec{MimeType: "audio/wav", DurationSeconds: 3, Seed: 1, Prompt: "hi", Voice: voice})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "a.wav")
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
		if pr.Streams[0].CodecName != "pcm_s16le" || pr.Streams[0].Duration != "3.000000" {
			t.Errorf("ffprobe: %s, %s s; want pcm_s16le, 3 s", pr.Streams[0].CodecName, pr.Streams[0].Duration)
		}
	}
}
