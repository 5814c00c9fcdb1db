package media

import (
	"encoding/binary"
	"fmt"
)

// This file holds a small MP4 box parser and an H.264 SPS parser, written
// for the tests independently of the writers.

type mp4Box struct {
	typ      string
	payload  []byte // after the 8-byte header
	children []*mp4Box
}

// containers lists the boxes whose payload is made of boxes, and how many
// bytes come before the first child.
var containers = map[string]int{
	"moov": 0, "trak": 0, "mdia": 0, "minf": 0, "dinf": 0, "stbl": 0, "edts": 0,
	"stsd": 8,  // version/flags, entry_count
	"dref": 8,  // version/flags, entry_count
	"avc1": 78, // VisualSampleEntry
	"mp4a": 28, // AudioSampleEntry
}

func parseBoxes(b []byte) ([]*mp4Box, error) {
	var out []*mp4Box
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, fmt.Errorf("%d trailing bytes", len(b))
		}
		size := int(binary.BigEndian.Uint32(b))
		typ := string(b[4:8])
		if size < 8 || size > len(b) {
			return nil, fmt.Errorf("box %q: size %d, %d bytes left", typ, size, len(b))
		}
		bx := &mp4Box{typ: typ, payload: b[8:size]}
		if skip, ok := containers[typ]; ok {
			if len(bx.payload) < skip {
				return nil, fmt.Errorf("box %q: %d bytes, want at least %d", typ, len(bx.payload), skip)
			}
			kids, err := parseBoxes(bx.payload[skip:])
			if err != nil {
				return nil, fmt.Errorf("in %q: %w", typ, err)
			}
			bx.children = kids
		}
		out = append(out, bx)
		b = b[size:]
	}
	return out, nil
}

// find returns the first box along a path of types, or nil.
func find(boxes []*mp4Box, path ...string) *mp4Box {
	for _, b := range boxes {
		if b.typ != path[0] {
			continue
		}
		if len(path) == 1 {
			return b
		}
		if c := find(b.children, path[1:]...); c != nil {
			return c
		}
	}
	return nil
}

// all returns every direct child of the given type.
func all(boxes []*mp4Box, typ string) []*mp4Box {
	var out []*mp4Box
	for _, b := range boxes {
		if b.typ == typ {
			out = append(out, b)
		}
	}
	return out
}

func be32(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }
func be16(b []byte, off int) uint16 { return binary.BigEndian.Uint16(b[off:]) }

// table reads the entries of a full box made of a 32-bit count followed by
// count records of n 32-bit fields (stts, stss, stsc, stco).
func table(b *mp4Box, n int) ([][]uint32, error) {
	if b == nil {
		return nil, fmt.Errorf("missing box")
	}
	p := b.payload
	if len(p) < 8 {
		return nil, fmt.Errorf("%s: short", b.typ)
	}
	count := int(be32(p, 4))
	if len(p) != 8+count*4*n {
		return nil, fmt.Errorf("%s: %d bytes for %d entries", b.typ, len(p), count)
	}
	out := make([][]uint32, count)
	for i := range out {
		for j := 0; j < n; j++ {
			out[i] = append(out[i], be32(p, 8+(i*n+j)*4))
		}
	}
	return out, nil
}

// bitReader reads MSB-first bits and Exp-Golomb codes from an RBSP.
type bitReader struct {
	b   []byte
	pos int
	err error
}

func (r *bitReader) u(n int) uint64 {
	var v uint64
	for i := 0; i < n; i++ {
		if r.pos >= 8*len(r.b) {
			r.err = fmt.Errorf("read past the end")
			return 0
		}
		v = v<<1 | uint64(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bitReader) ue() uint64 {
	zeros := 0
	for r.u(1) == 0 {
		if r.err != nil || zeros > 62 {
			r.err = fmt.Errorf("bad Exp-Golomb code")
			return 0
		}
		zeros++
	}
	return 1<<zeros - 1 + r.u(zeros)
}

func (r *bitReader) se() int64 {
	v := r.ue()
	if v%2 == 1 {
		return int64(v+1) / 2
	}
	return -int64(v / 2)
}

// unescape removes emulation prevention bytes from a NAL unit payload.
func unescape(b []byte) []byte {
	out := make([]byte, 0, len(b))
	zeros := 0
	for _, c := range b {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// spsInfo is what the tests check in a sequence parameter set.
type spsInfo struct {
	profile, constraints, level int
	log2MaxFrameNum, pocType    int
	maxRefFrames                int
	mbW, mbH                    int
	frameMbsOnly                bool
	cropL, cropR, cropT, cropB  int
	width, height               int
	vui                         bool
	fpsNum, fpsDen              int
}

// parseSPS decodes a Baseline SPS NAL unit (with its header byte).
func parseSPS(nal []byte) (spsInfo, error) {
	var s spsInfo
	if len(nal) < 4 || nal[0]&0x1F != 7 {
		return s, fmt.Errorf("not an SPS NAL unit")
	}
	r := &bitReader{b: unescape(nal[1:])}
	s.profile = int(r.u(8))
	s.constraints = int(r.u(8))
	s.level = int(r.u(8))
	r.ue() // seq_parameter_set_id
	if s.profile != 66 && s.profile != 77 && s.profile != 88 {
		return s, fmt.Errorf("profile %d: only Baseline/Main/Extended parsed", s.profile)
	}
	s.log2MaxFrameNum = int(r.ue()) + 4
	s.pocType = int(r.ue())
	switch s.pocType {
	case 0:
		r.ue()
	case 1:
		return s, fmt.Errorf("pic_order_cnt_type 1 not parsed")
	}
	s.maxRefFrames = int(r.ue())
	r.u(1) // gaps
	s.mbW = int(r.ue()) + 1
	s.mbH = int(r.ue()) + 1
	s.frameMbsOnly = r.u(1) == 1
	if !s.frameMbsOnly {
		r.u(1)
	}
	r.u(1) // direct_8x8_inference_flag
	if r.u(1) == 1 {
		s.cropL, s.cropR, s.cropT, s.cropB = int(r.ue()), int(r.ue()), int(r.ue()), int(r.ue())
	}
	unitY := 2
	if !s.frameMbsOnly {
		unitY = 4
	}
	heightMul := 1
	if !s.frameMbsOnly {
		heightMul = 2
	}
	s.width = s.mbW*16 - 2*(s.cropL+s.cropR)
	s.height = s.mbH*16*heightMul - unitY*(s.cropT+s.cropB)
	s.vui = r.u(1) == 1
	if s.vui {
		if r.u(1) == 1 { // aspect_ratio_info_present_flag
			if r.u(8) == 255 {
				r.u(32)
			}
		}
		if r.u(1) == 1 { // overscan_info_present_flag
			r.u(1)
		}
		if r.u(1) == 1 { // video_signal_type_present_flag
			r.u(4)
			if r.u(1) == 1 {
				r.u(24)
			}
		}
		if r.u(1) == 1 { // chroma_loc_info_present_flag
			r.ue()
			r.ue()
		}
		if r.u(1) == 1 { // timing_info_present_flag
			units := r.u(32)
			scale := r.u(32)
			r.u(1)
			s.fpsNum, s.fpsDen = int(scale), int(2*units)
		}
	}
	return s, r.err
}
