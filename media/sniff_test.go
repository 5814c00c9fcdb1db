package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"testing"
)

// riff wraps chunks in a RIFF/WEBP container.
func riff(chunks ...[]byte) []byte {
	var body []byte
	body = append(body, "WEBP"...)
	for _, c := range chunks {
		body = append(body, c...)
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return append(out, body...)
}

// chunk makes a RIFF chunk, padded to an even length.
func chunk(fourcc string, payload []byte) []byte {
	out := append([]byte(fourcc), binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))...)
	out = append(out, payload...)
	if len(payload)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// webpLossless is a lossless (VP8L) WEBP header of a w x h picture: enough
// for DecodeConfig, which reads no pixels.
func webpLossless(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14 // no alpha, version 0
	return riff(chunk("VP8L", append([]byte{0x2F}, binary.LittleEndian.AppendUint32(nil, bits)...)))
}

// webpLossy is a lossy (VP8) WEBP key frame header of a w x h picture.
func webpLossy(w, h int) []byte {
	const firstPartition = 0
	tag := uint32(0) | 0<<1 | 1<<4 | firstPartition<<5 // key frame, version 0, shown
	p := []byte{byte(tag), byte(tag >> 8), byte(tag >> 16), 0x9D, 0x01, 0x2A}
	p = binary.LittleEndian.AppendUint16(p, uint16(w))
	p = binary.LittleEndian.AppendUint16(p, uint16(h))
	return riff(chunk("VP8 ", p))
}

// pngHeader is a PNG signature and an IHDR chunk (with a correct CRC)
// declaring a w x h 8-bit RGB picture, and nothing else.
func pngHeader(w, h uint32) []byte {
	out := []byte("\x89PNG\r\n\x1a\n")
	data := []byte("IHDR")
	data = binary.BigEndian.AppendUint32(data, w)
	data = binary.BigEndian.AppendUint32(data, h)
	data = append(data, 8, 2, 0, 0, 0) // depth 8, RGB, deflate, adaptive filter, no interlace
	out = binary.BigEndian.AppendUint32(out, 13)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(data))
}

func TestSniff(t *testing.T) {
	png, err := Generate(Spec{MimeType: "image/png", Width: 33, Height: 21, Seed: 1, Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	jpg, err := Generate(Spec{MimeType: "image/jpeg", Width: 40, Height: 30, Seed: 1, Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	wav, _ := Generate(Spec{MimeType: "audio/wav", DurationSeconds: 1})
	mp4, _ := Generate(Spec{MimeType: "video/mp4", Width: 16, Height: 16, DurationSeconds: 1})
	glb, _ := Generate(Spec{MimeType: "model/gltf-binary"})
	var gifBuf bytes.Buffer
	pal := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	if err := gif.Encode(&gifBuf, pal, nil); err != nil {
		t.Fatal(err)
	}
	truncatedJPEG := append([]byte{}, jpg[:len(jpg)/3]...)
	truncatedJPEG = truncatedJPEG[:min(len(truncatedJPEG), 20)]

	cases := []struct {
		name    string
		data    []byte
		mime    string
		w, h    int
		wantErr error
	}{
		{"png", png, "image/png", 33, 21, nil},
		{"jpeg", jpg, "image/jpeg", 40, 30, nil},
		{"webp lossless", webpLossless(3, 2), "image/webp", 3, 2, nil},
		{"webp lossy", webpLossy(320, 200), "image/webp", 320, 200, nil},
		{"png header only", pngHeader(640, 480), "image/png", 640, 480, nil},
		{"png at the side limit", pngHeader(MaxSide, 100), "image/png", MaxSide, 100, nil},
		{"gif", gifBuf.Bytes(), "", 0, 0, ErrUnsupported},
		{"empty", nil, "", 0, 0, ErrUnsupported},
		{"two bytes of JPEG magic", []byte{0xFF, 0xD8}, "", 0, 0, ErrUnsupported},
		{"text", []byte("hello, world"), "", 0, 0, ErrUnsupported},
		{"wav", wav, "", 0, 0, ErrUnsupported},
		{"mp4", mp4, "", 0, 0, ErrUnsupported},
		{"glb", glb, "", 0, 0, ErrUnsupported},
		{"png 100000x100000", pngHeader(100000, 100000), "image/png", 100000, 100000, ErrCorrupt},
		{"png over the side limit", pngHeader(MaxSide+1, 10), "image/png", MaxSide + 1, 10, ErrCorrupt},
		{"png over the pixel limit", pngHeader(15000, 15000), "image/png", 15000, 15000, ErrCorrupt},
		{"png zero width", pngHeader(0, 10), "image/png", 0, 0, ErrCorrupt},
		{"png bad CRC", append(pngHeader(10, 10)[:29], 0, 0, 0, 0), "image/png", 0, 0, ErrCorrupt},
		{"png signature only", []byte("\x89PNG\r\n\x1a\n"), "image/png", 0, 0, ErrCorrupt},
		{"garbage after JPEG magic", append([]byte{0xFF, 0xD8, 0xFF}, "this is not a JPEG at all, just text"...), "image/jpeg", 0, 0, ErrCorrupt},
		{"truncated JPEG", truncatedJPEG, "image/jpeg", 0, 0, ErrCorrupt},
		{"webp without chunk", riff(), "image/webp", 0, 0, ErrCorrupt},
		{"webp bad VP8L signature", riff(chunk("VP8L", []byte{0x00, 1, 2, 3, 4})), "image/webp", 0, 0, ErrCorrupt},
	}
	for _, c := range cases {
		info, err := Sniff(c.data)
		if c.wantErr == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
		} else if !errors.Is(err, c.wantErr) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.wantErr)
			continue
		}
		if info.MimeType != c.mime || info.Width != c.w || info.Height != c.h {
			t.Errorf("%s: Sniff = %+v, want %s %dx%d", c.name, info, c.mime, c.w, c.h)
		}
		if got := SniffType(c.data); got != c.mime {
			t.Errorf("%s: SniffType = %q, want %q", c.name, got, c.mime)
		}
	}
}

// FuzzSniff checks that no input makes Sniff panic, and that it accepts
// only sizes within its limits.
func FuzzSniff(f *testing.F) {
	png, _ := Generate(Spec{MimeType: "image/png", Width: 5, Height: 4})
	jpg, _ := Generate(Spec{MimeType: "image/jpeg", Width: 5, Height: 4})
	for _, seed := range [][]byte{png, jpg, webpLossless(7, 9), webpLossy(8, 8), pngHeader(100000, 100000), {0xFF, 0xD8, 0xFF, 0xE0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Sniff(data)
		if err == nil && (info.Width <= 0 || info.Height <= 0 || info.Width > MaxSide || info.Height > MaxSide || info.MimeType == "") {
			t.Errorf("accepted %+v", info)
		}
	})
}
