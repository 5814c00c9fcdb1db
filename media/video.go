package media

import (
	"encoding/binary"
	"fmt"
)

const (
	// videoFPS is the frame rate of generated videos: low, as the pictures
	// move by whole macroblocks, and it keeps the files small.
	videoFPS = 10
	// videoTimescale is the MP4 media timescale of the video track.
	videoTimescale = 12800
	// keySeconds is the usual distance between key frames (IDR), the
	// common streaming GOP: a key frame costs about one byte a macroblock
	// (8 kB at 1080p), a frame that only moves shapes much less.
	keySeconds = 2
	// keyFrameBudget bounds the macroblocks all key frames of a video
	// hold together: beyond it (huge or very long videos) key frames come
	// less often than every keySeconds.
	keyFrameBudget = 2_000_000
	// animationBudget bounds the macroblocks compared over all frames:
	// beyond it (huge or very long videos) the picture does not move.
	animationBudget = 100_000_000

	aacRate        = 48000 // Hz
	aacFrame       = 1024  // samples per AAC frame
	aacChannels    = 1
	aacTimescale   = aacRate
	aacSilentBytes = 4
)

// silentAACFrame is a raw AAC-LC frame of silence: a single channel element
// (SCE, tag 0) with global_gain 0, a long window with no scale factor bands,
// no pulse, TNS or gain control data, then the END element.
var silentAACFrame = []byte{0x00, 0x00, 0x00, 0x07}

// aacConfig is the AudioSpecificConfig: AAC-LC, 48 kHz, mono.
var aacConfig = []byte{0x11, 0x88}

// keyInterval returns the distance between IDR frames, in frames.
func keyInterval(mbs, seconds int) int {
	sec := max(keySeconds, (seconds*mbs+keyFrameBudget-1)/keyFrameBudget)
	return sec * videoFPS
}

// generateVideo encodes the scene of s as an H.264 MP4.
func generateVideo(s Spec) ([]byte, error) {
	p := newH264Params(s.Width, s.Height, videoFPS)
	sc := newScene(s.Seed, s.Prompt)
	pc := &picture{p: p, colours: make([]yuv, len(sc.palette))}
	for i, c := range sc.palette {
		pc.colours[i] = rgbToYUV(c)
	}
	mbs := p.mbW * p.mbH
	frames := s.DurationSeconds * videoFPS
	keyEvery := keyInterval(mbs, s.DurationSeconds)
	animate := sc.moves() && mbs*frames <= animationBudget

	grid := make([]uint8, mbs)
	prev := make([]uint8, mbs)
	colBand := make([]uint8, p.mbW)
	sc.render(grid, p.mbW, p.mbH, s.Width, s.Height, 16, 0, videoFPS, colBand)

	video := &mp4Track{
		id:          1,
		handler:     "vide",
		name:        "VideoHandler",
		timescale:   videoTimescale,
		width:       s.Width,
		height:      s.Height,
		sampleEntry: avc1Entry(s.Width, s.Height, p.sps(), p.pps()),
		chunkOf:     func(i int) int { return i / videoFPS },
	}
	lastIDR, idrs := 0, 0
	for f := 0; f < frames; f++ {
		if animate && f > 0 {
			grid, prev = prev, grid
			sc.render(grid, p.mbW, p.mbH, s.Width, s.Height, 16, f, videoFPS, colBand)
		}
		var nal []byte
		if f%keyEvery == 0 {
			nal = pc.idr(grid, idrs%65536)
			lastIDR = f
			idrs++
			video.sync = append(video.sync, uint32(f+1))
		} else {
			ref := prev
			if !animate {
				ref = nil // nothing moves: every macroblock is skipped
			}
			nal = pc.pFrame(grid, ref, (f-lastIDR)%(1<<log2MaxFrame))
		}
		sample := make([]byte, 4, 4+len(nal))
		binary.BigEndian.PutUint32(sample, uint32(len(nal)))
		video.samples = append(video.samples, append(sample, nal...))
		video.durations = append(video.durations, videoTimescale/videoFPS)
	}
	tracks := []*mp4Track{video}

	if s.Audio {
		total := s.DurationSeconds * aacRate
		n := (total + aacFrame - 1) / aacFrame
		audio := &mp4Track{
			id:          2,
			handler:     "soun",
			name:        "SoundHandler",
			timescale:   aacTimescale,
			sampleEntry: mp4aEntry(aacRate, aacChannels, aacConfig, uint32(aacSilentBytes*8*aacRate/aacFrame)),
			chunkOf:     func(i int) int { return i * aacFrame / aacRate },
		}
		for i := 0; i < n; i++ {
			audio.samples = append(audio.samples, silentAACFrame)
			// The last frame is cut so that the track lasts exactly the
			// requested duration.
			audio.durations = append(audio.durations, uint32(min(aacFrame, total-i*aacFrame)))
		}
		tracks = append(tracks, audio)
	}
	out, err := writeMP4(tracks, s.DurationSeconds)
	if err != nil {
		return nil, fmt.Errorf("media: writing a %dx%d %d s video: %w", s.Width, s.Height, s.DurationSeconds, err)
	}
	return out, nil
}
