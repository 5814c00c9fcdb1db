package media

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// videoInfo is what checkMP4 learned from a file.
type videoInfo struct {
	sps          spsInfo
	samples      [][]byte // video samples, by number
	sync         []uint32
	audioSamples int
}

// checkMP4 parses an MP4 written by Generate and checks its structure
// against the spec.
func checkMP4(t *testing.T, s Spec, data []byte) videoInfo {
	t.Helper()
	var info videoInfo
	boxes, err := parseBoxes(data)
	if err != nil {
		t.Fatalf("parsing the boxes: %v", err)
	}
	var types []string
	for _, b := range boxes {
		types = append(types, b.typ)
	}
	if len(boxes) != 3 || types[0] != "ftyp" || types[1] != "moov" || types[2] != "mdat" {
		t.Fatalf("top-level boxes %v, want ftyp moov mdat", types)
	}
	ftyp := boxes[0].payload
	if string(ftyp[:4]) != "isom" || !bytes.Contains(ftyp[8:], []byte("avc1")) {
		t.Errorf("ftyp %q: want major brand isom and compatible brand avc1", ftyp)
	}
	mdat := boxes[2]
	mdatStart := len(data) - len(mdat.payload)

	mvhd := find(boxes, "moov", "mvhd")
	if mvhd == nil {
		t.Fatal("no mvhd")
	}
	movieScale := be32(mvhd.payload, 12)
	if movieScale == 0 || be32(mvhd.payload, 16) != uint32(s.DurationSeconds)*movieScale {
		t.Errorf("mvhd duration %d at timescale %d, want %d s", be32(mvhd.payload, 16), movieScale, s.DurationSeconds)
	}

	traks := all(find(boxes, "moov").children, "trak")
	wantTracks := 1
	if s.Audio {
		wantTracks = 2
	}
	if len(traks) != wantTracks {
		t.Fatalf("%d tracks, want %d", len(traks), wantTracks)
	}
	for _, trak := range traks {
		tk := trak.children
		hdlr := find(tk, "mdia", "hdlr")
		tkhd := find(tk, "tkhd")
		mdhd := find(tk, "mdia", "mdhd")
		if hdlr == nil || tkhd == nil || mdhd == nil {
			t.Fatal("trak without hdlr, tkhd or mdhd")
		}
		handler := string(hdlr.payload[8:12])
		if be32(tkhd.payload, 20) != uint32(s.DurationSeconds)*movieScale {
			t.Errorf("%s tkhd duration %d, want %d", handler, be32(tkhd.payload, 20), uint32(s.DurationSeconds)*movieScale)
		}
		mediaScale := be32(mdhd.payload, 12)
		if be32(mdhd.payload, 16) != uint32(s.DurationSeconds)*mediaScale {
			t.Errorf("%s mdhd duration %d at timescale %d, want %d s", handler, be32(mdhd.payload, 16), mediaScale, s.DurationSeconds)
		}
		stbl := find(tk, "mdia", "minf", "stbl")
		if stbl == nil {
			t.Fatal("no stbl")
		}
		st := stbl.children
		stts, err := table(find(st, "stts"), 2)
		if err != nil {
			t.Fatalf("stts: %v", err)
		}
		var nStts, total uint64
		for _, e := range stts {
			nStts += uint64(e[0])
			total += uint64(e[0]) * uint64(e[1])
		}
		if total != uint64(s.DurationSeconds)*uint64(mediaScale) {
			t.Errorf("%s: stts sums to %d, want %d", handler, total, uint64(s.DurationSeconds)*uint64(mediaScale))
		}
		stsz := find(st, "stsz")
		if stsz == nil || be32(stsz.payload, 4) != 0 {
			t.Fatal("no stsz with a size per sample")
		}
		count := int(be32(stsz.payload, 8))
		if len(stsz.payload) != 12+4*count || uint64(count) != nStts {
			t.Fatalf("%s: stsz has %d samples (%d bytes), stts %d", handler, count, len(stsz.payload), nStts)
		}
		stsc, err := table(find(st, "stsc"), 3)
		if err != nil {
			t.Fatalf("stsc: %v", err)
		}
		stco, err := table(find(st, "stco"), 1)
		if err != nil {
			t.Fatalf("stco: %v", err)
		}
		// Walk the chunks to find every sample's bytes.
		var samples [][]byte
		sample := 0
		for c := range stco {
			per := 0
			for _, e := range stsc {
				if int(e[0]) <= c+1 {
					per = int(e[1])
				}
			}
			off := int(stco[c][0])
			for i := 0; i < per && sample < count; i++ {
				size := int(be32(stsz.payload, 12+4*sample))
				if off < mdatStart || off+size > len(data) {
					t.Fatalf("%s sample %d at %d+%d is outside mdat [%d, %d)", handler, sample+1, off, size, mdatStart, len(data))
				}
				samples = append(samples, data[off:off+size])
				off += size
				sample++
			}
		}
		if sample != count {
			t.Fatalf("%s: chunks hold %d samples, want %d", handler, sample, count)
		}

		switch handler {
		case "vide":
			if want := s.DurationSeconds * videoFPS; count != want {
				t.Errorf("%d video samples, want %d (%d fps)", count, want, videoFPS)
			}
			if w, h := be32(tkhd.payload, 76)>>16, be32(tkhd.payload, 80)>>16; int(w) != s.Width || int(h) != s.Height {
				t.Errorf("tkhd size %dx%d, want %dx%d", w, h, s.Width, s.Height)
			}
			avc1 := find(st, "stsd", "avc1")
			if avc1 == nil {
				t.Fatal("no avc1 sample entry")
			}
			if w, h := be16(avc1.payload, 24), be16(avc1.payload, 26); int(w) != s.Width || int(h) != s.Height {
				t.Errorf("avc1 size %dx%d, want %dx%d", w, h, s.Width, s.Height)
			}
			avcC := find(avc1.children, "avcC")
			if avcC == nil {
				t.Fatal("no avcC")
			}
			p := avcC.payload
			if p[0] != 1 || p[4]&3 != 3 || p[5]&0x1F != 1 {
				t.Fatalf("avcC header % x: want version 1, 4-byte lengths, one SPS", p[:6])
			}
			spsLen := int(be16(p, 6))
			sps := p[8 : 8+spsLen]
			if p[8+spsLen] != 1 {
				t.Fatalf("avcC holds %d PPS, want 1", p[8+spsLen])
			}
			ppsLen := int(be16(p, 9+spsLen))
			if pps := p[11+spsLen:]; len(pps) != ppsLen || pps[0]&0x1F != 8 {
				t.Fatalf("bad PPS in avcC")
			}
			if p[1] != sps[1] || p[3] != sps[3] {
				t.Errorf("avcC profile/level %d/%d, SPS says %d/%d", p[1], p[3], sps[1], sps[3])
			}
			info.sps, err = parseSPS(sps)
			if err != nil {
				t.Fatalf("parsing the SPS: %v", err)
			}
			stssBox := find(st, "stss")
			if stssBox == nil {
				t.Fatal("no stss: every sample would be a sync sample")
			}
			stss, err := table(stssBox, 1)
			if err != nil || len(stss) == 0 || stss[0][0] != 1 {
				t.Fatalf("stss %v (%v): want sample 1 first", stss, err)
			}
			for _, e := range stss {
				info.sync = append(info.sync, e[0])
			}
			// Every sample is one length-prefixed NAL unit: IDR on sync
			// samples, non-IDR slices elsewhere.
			isSync := map[int]bool{}
			for _, n := range info.sync {
				isSync[int(n)] = true
			}
			for i, smp := range samples {
				if len(smp) < 6 || int(binary.BigEndian.Uint32(smp)) != len(smp)-4 {
					t.Fatalf("sample %d: NAL length prefix does not match its %d bytes", i+1, len(smp))
				}
				typ := smp[4] & 0x1F
				if want := map[bool]byte{true: nalIDR, false: nalSlice}[isSync[i+1]]; typ != want {
					t.Fatalf("sample %d: NAL type %d, want %d", i+1, typ, want)
				}
			}
			info.samples = samples
		case "soun":
			mp4a := find(st, "stsd", "mp4a")
			if mp4a == nil {
				t.Fatal("no mp4a sample entry")
			}
			if rate := be32(mp4a.payload, 24) >> 16; rate != aacRate || mediaScale != aacRate {
				t.Errorf("audio rate %d, timescale %d, want %d", rate, mediaScale, aacRate)
			}
			esds := find(mp4a.children, "esds")
			if esds == nil || !bytes.Contains(esds.payload, append([]byte{0x05, 0x02}, aacConfig...)) {
				t.Errorf("esds without the AAC-LC AudioSpecificConfig")
			}
			if want := (s.DurationSeconds*aacRate + aacFrame - 1) / aacFrame; count != want {
				t.Errorf("%d audio frames, want %d", count, want)
			}
			info.audioSamples = count
		default:
			t.Errorf("unexpected handler %q", handler)
		}
	}
	return info
}

func TestVideoStructure(t *testing.T) {
	cases := []struct {
		w, h, sec int
		audio     bool
		level     int
	}{
		{1280, 720, 4, false, 31},
		{720, 1280, 6, true, 31},
		{1920, 1080, 8, false, 40},
		{1080, 1920, 5, true, 40},
		{720, 720, 12, false, 31},
		{2, 2, 1, false, 10},
		{202, 98, 2, true, 10},
		{16, 16, 3, false, 10},
	}
	for _, c := range cases {
		s := Spec{MimeType: "video/mp4", Width: c.w, Height: c.h, DurationSeconds: c.sec, Seed: 42, Prompt: "a red fox", Audio: c.audio}
		data, err := Generate(s)
		if err != nil {
			t.Fatalf("%dx%d: %v", c.w, c.h, err)
		}
		info := checkMP4(t, s, data)
		sps := info.sps
		if sps.profile != 66 || sps.constraints&0x40 == 0 {
			t.Errorf("%dx%d: profile %d constraints %#x, want Constrained Baseline", c.w, c.h, sps.profile, sps.constraints)
		}
		if sps.level != c.level {
			t.Errorf("%dx%d: level %d, want %d", c.w, c.h, sps.level, c.level)
		}
		if sps.mbW != (c.w+15)/16 || sps.mbH != (c.h+15)/16 {
			t.Errorf("%dx%d: %dx%d macroblocks", c.w, c.h, sps.mbW, sps.mbH)
		}
		if sps.width != c.w || sps.height != c.h {
			t.Errorf("SPS gives %dx%d (crop %d %d %d %d), want %dx%d", sps.width, sps.height, sps.cropL, sps.cropR, sps.cropT, sps.cropB, c.w, c.h)
		}
		if !sps.frameMbsOnly || sps.pocType != 2 || sps.maxRefFrames != 1 {
			t.Errorf("SPS %+v: want frames only, POC type 2, one reference", sps)
		}
		if sps.fpsDen == 0 || sps.fpsNum != videoFPS*sps.fpsDen {
			t.Errorf("SPS timing %d/%d, want %d fps", sps.fpsNum, sps.fpsDen, videoFPS)
		}
		if want := (c.sec + keySeconds - 1) / keySeconds; len(info.sync) != want {
			t.Errorf("%dx%d %d s: %d key frames, want %d (one every %d s)", c.w, c.h, c.sec, len(info.sync), want, keySeconds)
		}
		for i, n := range info.sync {
			if want := i*keySeconds*videoFPS + 1; int(n) != want {
				t.Errorf("key frame %d is sample %d, want %d", i, n, want)
			}
		}
	}
}

func TestVideoSize(t *testing.T) {
	data, err := Generate(Spec{MimeType: "video/mp4", Width: 1920, Height: 1080, DurationSeconds: 8, Seed: 7, Prompt: "sunset over the sea"})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 100_000 {
		t.Errorf("1080p 8 s video is %d bytes, want under 100 kB", len(data))
	}
}

// TestVideoLongAndHuge covers the paths that thin out key frames and stop
// the animation, and checks they stay valid and fast enough.
func TestVideoLongAndHuge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow in -short mode")
	}
	for _, s := range []Spec{
		{MimeType: "video/mp4", Width: 3840, Height: 2160, DurationSeconds: 70, Seed: 1, Prompt: "city"},
		{MimeType: "video/mp4", Width: 8192, Height: 8192, DurationSeconds: 20, Seed: 1, Prompt: "huge"},
	} {
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		info := checkMP4(t, s, data)
		mbs := ((s.Width + 15) / 16) * ((s.Height + 15) / 16)
		every := keyInterval(mbs, s.DurationSeconds, keySeconds)
		if want := (s.DurationSeconds*videoFPS + every - 1) / every; len(info.sync) != want {
			t.Errorf("%dx%d %d s: %d key frames, want %d", s.Width, s.Height, s.DurationSeconds, len(info.sync), want)
		}
		t.Logf("%dx%d %d s: %d bytes, %d key frames", s.Width, s.Height, s.DurationSeconds, len(data), len(info.sync))
	}
}

// TestVideoMoves checks that P frames code macroblocks when the scene
// moves (the decoded pictures are compared in TestFFmpeg).
func TestVideoMoves(t *testing.T) {
	s := Spec{MimeType: "video/mp4", Width: 640, Height: 360, DurationSeconds: 3, Seed: 3, Prompt: "bouncing"}
	data, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	info := checkMP4(t, s, data)
	sc := newScene(s.Seed, s.Prompt)
	if !sc.moves() {
		t.Fatal("the scene does not move")
	}
	// An all-skip P frame is a few bytes; some frames must be larger.
	larger := 0
	for i, smp := range info.samples {
		if i%videoFPS != 0 && len(smp) > 16 {
			larger++
		}
	}
	if larger == 0 {
		t.Error("every P frame is all skipped: nothing moves")
	}
}

func TestLevelPick(t *testing.T) {
	cases := []struct{ w, h, want int }{
		{176, 144, 10}, {352, 288, 12}, {640, 480, 22}, {1280, 720, 31}, {1920, 1080, 40},
		{2048, 1080, 42}, {3840, 2160, 51}, {4096, 4096, 60}, {8192, 8192, 62}, {8192, 16, 51},
	}
	for _, c := range cases {
		p := newH264Params(c.w, c.h, videoFPS)
		if p.level != c.want {
			t.Errorf("%dx%d: level %d, want %d", c.w, c.h, p.level, c.want)
		}
	}
}

func TestBitWriter(t *testing.T) {
	var w bitWriter
	w.ue(0)  // 1
	w.ue(1)  // 010
	w.ue(2)  // 011
	w.ue(7)  // 0001000
	w.se(-1) // 011
	w.se(2)  // 00100
	w.trailing()
	r := &bitReader{b: w.buf}
	if a, b, c, d := r.ue(), r.ue(), r.ue(), r.ue(); a != 0 || b != 1 || c != 2 || d != 7 {
		t.Errorf("ue read back %d %d %d %d", a, b, c, d)
	}
	if a, b := r.se(), r.se(); a != -1 || b != 2 {
		t.Errorf("se read back %d %d", a, b)
	}
	if r.u(1) != 1 || r.pos%8 == 0 && r.pos != 8*len(w.buf) {
		t.Errorf("no stop bit")
	}
	for _, v := range []uint64{0, 1, 1<<20 - 1, 1<<31 + 5, 1<<40 + 3} {
		var w bitWriter
		w.ue(v)
		w.trailing()
		r := &bitReader{b: w.buf}
		if got := r.ue(); got != v || r.err != nil {
			t.Errorf("ue(%d) read back %d (%v)", v, got, r.err)
		}
	}
}

func TestEmulationPrevention(t *testing.T) {
	got := nalUnit(3, nalIDR, []byte{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0x80})
	want := []byte{0x65, 0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 3, 2, 0, 0, 4, 0x80}
	if !bytes.Equal(got, want) {
		t.Errorf("nalUnit = % x, want % x", got, want)
	}
	if back := unescape(got[1:]); !bytes.Equal(back, []byte{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0x80}) {
		t.Errorf("unescape = % x", back)
	}
}

// nalUnitByByte is the byte-by-byte form of nalUnit's emulation prevention.
func nalUnitByByte(refIdc, typ int, rbsp []byte) []byte {
	out := []byte{byte(refIdc<<5 | typ)}
	zeros := 0
	for _, b := range rbsp {
		if zeros >= 2 && b <= 3 {
			out = append(out, 3)
			zeros = 0
		}
		out = append(out, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// TestEmulationPreventionRuns checks nalUnit's fast path (runs copied at
// once) against the byte-by-byte rule, on data rich in zeros and small
// bytes.
func TestEmulationPreventionRuns(t *testing.T) {
	r := newRNG(1, "nal", "test")
	for n := 0; n < 2000; n++ {
		b := make([]byte, r.intn(40))
		for i := range b {
			if r.intn(3) != 0 {
				b[i] = byte(r.intn(5))
			} else {
				b[i] = byte(r.intn(256))
			}
		}
		if got, want := nalUnit(2, nalSlice, b), nalUnitByByte(2, nalSlice, b); !bytes.Equal(got, want) {
			t.Fatalf("nalUnit(% x) = % x, want % x", b, got, want)
		}
	}
}

// TestLabelledVideoKeyFrames: a labelled video has a key frame every
// labelKeySeconds, and its frames are all there.
func TestLabelledVideoKeyFrames(t *testing.T) {
	s := Spec{MimeType: "video/mp4", Width: 640, Height: 360, DurationSeconds: 25, Seed: 3, Prompt: "keys", Label: testLabel}
	data, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	info := checkMP4(t, s, data)
	want := []uint32{1, labelKeySeconds*videoFPS + 1, 2*labelKeySeconds*videoFPS + 1}
	if len(info.sync) != len(want) || info.sync[1] != want[1] || info.sync[2] != want[2] {
		t.Errorf("key frames %v, want %v", info.sync, want)
	}
	if len(info.samples) != s.DurationSeconds*videoFPS {
		t.Errorf("%d frames, want %d", len(info.samples), s.DurationSeconds*videoFPS)
	}
}
