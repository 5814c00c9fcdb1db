package media

import (
	"fmt"
	"image"
)

// Poster returns the poster of the video s describes: its first frame as
// a JPEG of the video's size, with the label at the size of an image's (to
// read as a thumbnail) and the first frame's timecode. It is drawn from
// the scene, not decoded from the video.
func Poster(s Spec) ([]byte, error) {
	s.MimeType = mimeMP4
	if err := checkSize(s); err != nil {
		return nil, err
	}
	if err := checkDuration(s); err != nil {
		return nil, err
	}
	if s.Width%2 != 0 || s.Height%2 != 0 {
		return nil, fmt.Errorf("media: poster of %dx%d pixels: %w: videos have an even width and height", s.Width, s.Height, errBadSize)
	}
	p := newH264Params(s.Width, s.Height, videoFPS)
	sc := newScene(s.Seed, s.Prompt)
	grid := make([]uint8, p.mbW*p.mbH)
	sc.render(grid, p.mbW, p.mbH, s.Width, s.Height, 16, 0, videoFPS, nil)
	img := image.NewPaletted(image.Rect(0, 0, s.Width, s.Height), nil)
	for y := 0; y < s.Height; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+s.Width]
		cells := grid[(y/16)*p.mbW:]
		for x := range row {
			row[x] = cells[x/16]
		}
	}
	colours := sc.palette
	if !s.Label.empty() {
		// The label of a still (larger than in the frames: posters are
		// shown as thumbnails), with the first frame's timecode.
		lay, err := layoutLabel(s.Label, stillLabel, s.Width, s.Height, s.Width, videoLabelInfo(s), timecode(s.DurationSeconds*videoFPS-1, videoFPS), 0)
		if err != nil {
			return nil, err
		}
		lay.drawTimecode(timecode(0, videoFPS), func(int, int) {})
		colours = paintLabel(img, colours, &lay.mask, s.Height-lay.mask.h)
	}
	return encodeStill(img, colours, mimeJPEG)
}
