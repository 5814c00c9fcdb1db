package media

import (
	"encoding/binary"
	"fmt"
)

// This file writes ISO base media files (MP4) by hand: ftyp, then moov (so a
// player can start before the download ends), then mdat. Samples are
// grouped in one chunk per track and per second, interleaved.

// bw is a big-endian byte builder.
type bw []byte

func (b *bw) u8(v uint8)   { *b = append(*b, v) }
func (b *bw) u16(v uint16) { *b = binary.BigEndian.AppendUint16(*b, v) }
func (b *bw) u32(v uint32) { *b = binary.BigEndian.AppendUint32(*b, v) }
func (b *bw) str(s string) { *b = append(*b, s...) }
func (b *bw) zeros(n int) {
	for i := 0; i < n; i++ {
		*b = append(*b, 0)
	}
}

// box returns a box of the given type around the concatenated payloads.
func box(typ string, payload ...[]byte) []byte {
	n := 8
	for _, p := range payload {
		n += len(p)
	}
	out := make(bw, 0, n)
	out.u32(uint32(n))
	out.str(typ)
	for _, p := range payload {
		out = append(out, p...)
	}
	return out
}

// fullBox returns a box with a version and flags header.
func fullBox(typ string, version uint8, flags uint32, payload ...[]byte) []byte {
	h := bw{version, byte(flags >> 16), byte(flags >> 8), byte(flags)}
	return box(typ, append([][]byte{h}, payload...)...)
}

// unityMatrix is the identity transformation of mvhd and tkhd.
func unityMatrix(b *bw) {
	for _, v := range []uint32{0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000} {
		b.u32(v)
	}
}

// mp4Track is one track and its samples.
type mp4Track struct {
	id          uint32
	handler     string // "vide" or "soun"
	name        string
	timescale   uint32
	durations   []uint32 // of each sample, in timescale units
	samples     [][]byte
	sync        []uint32             // 1-based numbers of sync samples; nil: all are
	chunkOf     func(sample int) int // chunk index (a second) of a sample, never decreasing
	sampleEntry []byte               // the avc1 or mp4a box
	width       int                  // video only
	height      int
	// filled by writeMP4
	chunkOffsets []uint32
}

func (t *mp4Track) duration() uint64 {
	var d uint64
	for _, x := range t.durations {
		d += uint64(x)
	}
	return d
}

// writeMP4 lays out the tracks and returns the file. durationSec is the
// duration every track has and the movie header declares.
func writeMP4(tracks []*mp4Track, durationSec int) ([]byte, error) {
	const movieTimescale = 1000
	ftyp := bw{}
	ftyp.str("isom")
	ftyp.u32(0x200)
	ftyp.str("isomiso2avc1mp41")
	ftypBox := box("ftyp", ftyp)

	// Interleave chunks by their index (one a second), then by track.
	type piece struct {
		track, chunk int
	}
	var order []piece
	nChunks := 0
	for _, t := range tracks {
		if len(t.samples) > 0 {
			nChunks = max(nChunks, t.chunkOf(len(t.samples)-1)+1)
		}
	}
	for c := 0; c < nChunks; c++ {
		for ti := range tracks {
			order = append(order, piece{ti, c})
		}
	}
	// firstSample[t][c] is the first sample of chunk c of track t, and
	// firstSample[t][nChunks] the sample count: chunk c holds the samples
	// firstSample[t][c] to firstSample[t][c+1]-1 (none if they are equal).
	firstSample := make([][]int, len(tracks))
	for ti, t := range tracks {
		firstSample[ti] = make([]int, nChunks+1)
		for c := range firstSample[ti] {
			firstSample[ti][c] = len(t.samples)
		}
		for i := len(t.samples) - 1; i >= 0; i-- {
			firstSample[ti][t.chunkOf(i)] = i
		}
		for c := nChunks - 1; c >= 0; c-- {
			firstSample[ti][c] = min(firstSample[ti][c], firstSample[ti][c+1])
		}
	}
	// Offsets of the chunks inside the payload of mdat.
	rel := make([][]uint64, len(tracks))
	for ti := range tracks {
		rel[ti] = make([]uint64, nChunks)
	}
	var mdatLen uint64
	for _, pc := range order {
		rel[pc.track][pc.chunk] = mdatLen
		t := tracks[pc.track]
		for i := firstSample[pc.track][pc.chunk]; i < firstSample[pc.track][pc.chunk+1]; i++ {
			mdatLen += uint64(len(t.samples[i]))
		}
	}
	if mdatLen > 1<<32-1<<20 {
		return nil, fmt.Errorf("media: MP4 payload of %d bytes is over the 4 GiB a 32-bit box allows", mdatLen)
	}

	build := func(base uint64) []byte {
		var traks [][]byte
		for ti, t := range tracks {
			t.chunkOffsets = t.chunkOffsets[:0]
			for c := 0; c < nChunks; c++ {
				if firstSample[ti][c] < firstSample[ti][c+1] {
					t.chunkOffsets = append(t.chunkOffsets, uint32(base+rel[ti][c]))
				}
			}
			traks = append(traks, t.trak(movieTimescale, durationSec, firstSample[ti]))
		}
		mvhd := bw{}
		mvhd.u32(0) // creation_time
		mvhd.u32(0) // modification_time
		mvhd.u32(movieTimescale)
		mvhd.u32(uint32(durationSec * movieTimescale))
		mvhd.u32(0x00010000) // rate 1.0
		mvhd.u16(0x0100)     // volume 1.0
		mvhd.zeros(10)       // reserved
		unityMatrix(&mvhd)
		mvhd.zeros(24) // pre_defined
		mvhd.u32(uint32(len(tracks) + 1))
		return box("moov", append([][]byte{fullBox("mvhd", 0, 0, mvhd)}, traks...)...)
	}
	moov := build(0)
	base := uint64(len(ftypBox) + len(moov) + 8)
	moov = build(base)

	out := make([]byte, 0, int(base+mdatLen))
	out = append(out, ftypBox...)
	out = append(out, moov...)
	out = binary.BigEndian.AppendUint32(out, uint32(8+mdatLen))
	out = append(out, "mdat"...)
	for _, pc := range order {
		t := tracks[pc.track]
		for i := firstSample[pc.track][pc.chunk]; i < firstSample[pc.track][pc.chunk+1]; i++ {
			out = append(out, t.samples[i]...)
		}
	}
	return out, nil
}

// trak builds the track box. firstSample holds the first sample of each
// chunk index (and the sample count last).
func (t *mp4Track) trak(movieTimescale uint32, durationSec int, firstSample []int) []byte {
	tkhd := bw{}
	tkhd.u32(0) // creation_time
	tkhd.u32(0) // modification_time
	tkhd.u32(t.id)
	tkhd.u32(0) // reserved
	tkhd.u32(uint32(durationSec) * movieTimescale)
	tkhd.zeros(8) // reserved
	tkhd.u16(0)   // layer
	if t.handler == "soun" {
		tkhd.u16(1)      // alternate_group
		tkhd.u16(0x0100) // volume
	} else {
		tkhd.u16(0)
		tkhd.u16(0)
	}
	tkhd.u16(0) // reserved
	unityMatrix(&tkhd)
	tkhd.u32(uint32(t.width) << 16)
	tkhd.u32(uint32(t.height) << 16)

	mdhd := bw{}
	mdhd.u32(0)
	mdhd.u32(0)
	mdhd.u32(t.timescale)
	mdhd.u32(uint32(t.duration()))
	mdhd.u16(0x55C4) // language "und"
	mdhd.u16(0)

	hdlr := bw{}
	hdlr.u32(0) // pre_defined
	hdlr.str(t.handler)
	hdlr.zeros(12)
	hdlr.str(t.name)
	hdlr.u8(0)

	var mediaHeader []byte
	if t.handler == "vide" {
		mediaHeader = fullBox("vmhd", 0, 1, make([]byte, 8))
	} else {
		mediaHeader = fullBox("smhd", 0, 0, make([]byte, 4))
	}
	dref := fullBox("dref", 0, 0, []byte{0, 0, 0, 1}, fullBox("url ", 0, 1))

	stsd := fullBox("stsd", 0, 0, []byte{0, 0, 0, 1}, t.sampleEntry)

	stts := bw{}
	var entries [][2]uint32
	for _, d := range t.durations {
		if n := len(entries); n > 0 && entries[n-1][1] == d {
			entries[n-1][0]++
		} else {
			entries = append(entries, [2]uint32{1, d})
		}
	}
	stts.u32(uint32(len(entries)))
	for _, e := range entries {
		stts.u32(e[0])
		stts.u32(e[1])
	}

	stsc := bw{}
	type stscEntry struct{ first, n uint32 }
	var sc []stscEntry
	chunk := uint32(0)
	for c := 0; c+1 < len(firstSample); c++ {
		n := uint32(firstSample[c+1] - firstSample[c])
		if n == 0 {
			continue
		}
		chunk++
		if k := len(sc); k == 0 || sc[k-1].n != n {
			sc = append(sc, stscEntry{chunk, n})
		}
	}
	stsc.u32(uint32(len(sc)))
	for _, e := range sc {
		stsc.u32(e.first)
		stsc.u32(e.n)
		stsc.u32(1) // sample_description_index
	}

	stsz := bw{}
	stsz.u32(0) // sample_size: they differ
	stsz.u32(uint32(len(t.samples)))
	for _, s := range t.samples {
		stsz.u32(uint32(len(s)))
	}

	stco := bw{}
	stco.u32(uint32(len(t.chunkOffsets)))
	for _, o := range t.chunkOffsets {
		stco.u32(o)
	}

	stblParts := [][]byte{stsd, fullBox("stts", 0, 0, stts)}
	if t.sync != nil {
		stss := bw{}
		stss.u32(uint32(len(t.sync)))
		for _, n := range t.sync {
			stss.u32(n)
		}
		stblParts = append(stblParts, fullBox("stss", 0, 0, stss))
	}
	stblParts = append(stblParts, fullBox("stsc", 0, 0, stsc), fullBox("stsz", 0, 0, stsz), fullBox("stco", 0, 0, stco))

	minf := box("minf", mediaHeader, box("dinf", dref), box("stbl", stblParts...))
	mdia := box("mdia", fullBox("mdhd", 0, 0, mdhd), fullBox("hdlr", 0, 0, hdlr), minf)
	return box("trak", fullBox("tkhd", 0, 3, tkhd), mdia)
}

// avc1Entry returns the visual sample entry of an H.264 track.
func avc1Entry(width, height int, sps, pps []byte) []byte {
	avcC := bw{}
	avcC.u8(1)      // configurationVersion
	avcC.u8(sps[1]) // AVCProfileIndication
	avcC.u8(sps[2]) // profile_compatibility
	avcC.u8(sps[3]) // AVCLevelIndication
	avcC.u8(0xFF)   // lengthSizeMinusOne 3
	avcC.u8(0xE1)   // one SPS
	avcC.u16(uint16(len(sps)))
	avcC = append(avcC, sps...)
	avcC.u8(1) // one PPS
	avcC.u16(uint16(len(pps)))
	avcC = append(avcC, pps...)

	e := bw{}
	e.zeros(6)  // reserved
	e.u16(1)    // data_reference_index
	e.zeros(16) // pre_defined, reserved
	e.u16(uint16(width))
	e.u16(uint16(height))
	e.u32(0x00480000) // 72 dpi
	e.u32(0x00480000)
	e.u32(0) // reserved
	e.u16(1) // frame_count
	name := "mediamock H.264"
	e.u8(uint8(len(name)))
	e.str(name)
	e.zeros(31 - len(name))
	e.u16(0x0018) // depth
	e.u16(0xFFFF) // pre_defined -1
	return box("avc1", e, box("avcC", avcC))
}

// mp4aEntry returns the audio sample entry of an AAC track.
func mp4aEntry(sampleRate, channels int, asc []byte, bitrate uint32) []byte {
	dsi := append([]byte{0x05, byte(len(asc))}, asc...)
	dcd := bw{0x40, 0x15}            // MPEG-4 audio; audio stream
	dcd = append(dcd, 0, 0x06, 0x00) // bufferSizeDB 1536
	dcd.u32(bitrate)                 // maxBitrate
	dcd.u32(bitrate)                 // avgBitrate
	dcd = append(dcd, dsi...)
	es := bw{0, 1, 0} // ES_ID 1, flags
	es = append(es, 0x04, byte(len(dcd)))
	es = append(es, dcd...)
	es = append(es, 0x06, 0x01, 0x02) // SLConfigDescriptor: MP4
	esds := append(bw{0x03, byte(len(es))}, es...)

	e := bw{}
	e.zeros(6) // reserved
	e.u16(1)   // data_reference_index
	e.zeros(8) // reserved
	e.u16(uint16(channels))
	e.u16(16) // samplesize
	e.u16(0)  // pre_defined
	e.u16(0)  // reserved
	e.u32(uint32(sampleRate) << 16)
	return box("mp4a", e, fullBox("esds", 0, 0, esds))
}
