package media

import (
	"image"
)

// This file writes an H.264 (ISO/IEC 14496-10) Constrained Baseline
// bitstream for pictures made of flat 16x16 macroblocks.
//
// Every coded macroblock is Intra 16x16 with no AC coefficients. Its
// prediction (vertical, horizontal or DC) is flat because its neighbours are
// flat, and a single DC level per plane moves it to the wanted colour: at
// QP 28 (chroma QP 22 through chroma_qp_index_offset -6) the dequantised DC
// level c of the luma 16x16 DC transform, or of the chroma 2x2 DC transform,
// adds exactly c to every sample of the block, so the encoder knows the
// decoded picture without simulating the transforms. Chroma DC prediction
// is only used when it is flat (at most one neighbour, or equal
// neighbours). Deblocking is disabled, so decoded pictures are exactly the
// flat colours. P pictures skip unchanged macroblocks (a P_Skip with a zero
// motion vector copies the previous picture) and code the others as intra
// macroblocks.
//
// Macroblocks holding text (the label of a video, see label.go) are coded
// as I_PCM: their samples are written as they are, so they too decode
// exactly. Their edges are not flat, so a flat macroblock next to one
// predicts its luma from the actual edge samples (DC prediction averages
// them into a flat prediction; vertical or horizontal prediction is only
// used from a flat edge), and their chroma is flat (the label is grey on
// grey). An I_PCM macroblock counts as 16 coefficients in every block for
// the CAVLC context of its neighbours (nC), which picks another
// coeff_token table for their DC level.

const (
	sliceQP       = 28 // see above: one DC level = one sample value
	chromaQPShift = -6 // chroma QP 22, same property
	log2MaxFrame  = 16 // bits of frame_num
)

// levelLimits lists level_idc with the largest frame (macroblocks) and
// macroblock rate of each level (Table A-1).
var levelLimits = []struct{ idc, maxFS, maxMBPS int }{
	{10, 99, 1485}, {11, 396, 3000}, {12, 396, 6000}, {13, 396, 11880},
	{20, 396, 11880}, {21, 792, 19800}, {22, 1620, 20250}, {30, 1620, 40500},
	{31, 3600, 108000}, {32, 5120, 216000}, {40, 8192, 245760}, {42, 8704, 522240},
	{50, 22080, 589824}, {51, 36864, 983040}, {60, 139264, 4177920},
}

// pickLevel returns the lowest level that allows the frame size and rate;
// frames larger than any level allows get the highest level (decoders such
// as FFmpeg do not enforce it).
func pickLevel(mbW, mbH, fps int) int {
	fs := mbW * mbH
	for _, l := range levelLimits {
		side := int(isqrt(int64(8 * l.maxFS)))
		if fs <= l.maxFS && mbW <= side && mbH <= side && fs*fps <= l.maxMBPS {
			return l.idc
		}
	}
	return 62
}

// h264Params are the sequence-wide choices.
type h264Params struct {
	width, height int // display size, even
	mbW, mbH      int
	fps           int
	level         int
}

func newH264Params(width, height, fps int) h264Params {
	p := h264Params{width: width, height: height, fps: fps, mbW: (width + 15) / 16, mbH: (height + 15) / 16}
	p.level = pickLevel(p.mbW, p.mbH, fps)
	return p
}

// sps returns the sequence parameter set NAL unit.
func (p h264Params) sps() []byte {
	var w bitWriter
	w.u(8, 66)   // profile_idc: Baseline
	w.u(8, 0xC0) // constraint_set0 and constraint_set1: Constrained Baseline
	w.u(8, uint64(p.level))
	w.ue(0)                           // seq_parameter_set_id
	w.ue(log2MaxFrame - 4)            // log2_max_frame_num_minus4
	w.ue(2)                           // pic_order_cnt_type 2: output order = decoding order
	w.ue(1)                           // max_num_ref_frames
	w.flag(false)                     // gaps_in_frame_num_value_allowed_flag
	w.ue(uint64(p.mbW - 1))           // pic_width_in_mbs_minus1
	w.ue(uint64(p.mbH - 1))           // pic_height_in_map_units_minus1
	w.flag(true)                      // frame_mbs_only_flag
	w.flag(true)                      // direct_8x8_inference_flag
	cropR := (p.mbW*16 - p.width) / 2 // in chroma samples (CropUnitX = 2)
	cropB := (p.mbH*16 - p.height) / 2
	w.flag(cropR != 0 || cropB != 0) // frame_cropping_flag
	if cropR != 0 || cropB != 0 {
		w.ue(0) // frame_crop_left_offset
		w.ue(uint64(cropR))
		w.ue(0) // frame_crop_top_offset
		w.ue(uint64(cropB))
	}
	w.flag(true)             // vui_parameters_present_flag
	w.flag(true)             // aspect_ratio_info_present_flag
	w.u(8, 1)                // aspect_ratio_idc: square pixels
	w.flag(false)            // overscan_info_present_flag
	w.flag(true)             // video_signal_type_present_flag
	w.u(3, 5)                // video_format: unspecified
	w.flag(false)            // video_full_range_flag
	w.flag(true)             // colour_description_present_flag
	w.u(8, 1)                // colour_primaries: BT.709
	w.u(8, 1)                // transfer_characteristics: BT.709
	w.u(8, 1)                // matrix_coefficients: BT.709
	w.flag(false)            // chroma_loc_info_present_flag
	w.flag(true)             // timing_info_present_flag
	w.u(32, 1)               // num_units_in_tick
	w.u(32, uint64(2*p.fps)) // time_scale: two ticks a frame
	w.flag(true)             // fixed_frame_rate_flag
	w.flag(false)            // nal_hrd_parameters_present_flag
	w.flag(false)            // vcl_hrd_parameters_present_flag
	w.flag(false)            // pic_struct_present_flag
	w.flag(true)             // bitstream_restriction_flag
	w.flag(true)             // motion_vectors_over_pic_boundaries_flag
	w.ue(0)                  // max_bytes_per_pic_denom
	w.ue(0)                  // max_bits_per_mb_denom
	w.ue(16)                 // log2_max_mv_length_horizontal
	w.ue(16)                 // log2_max_mv_length_vertical
	w.ue(0)                  // max_num_reorder_frames
	w.ue(1)                  // max_dec_frame_buffering
	w.trailing()
	return nalUnit(3, nalSPS, w.buf)
}

// pps returns the picture parameter set NAL unit.
func (p h264Params) pps() []byte {
	var w bitWriter
	w.ue(0)             // pic_parameter_set_id
	w.ue(0)             // seq_parameter_set_id
	w.flag(false)       // entropy_coding_mode_flag: CAVLC
	w.flag(false)       // bottom_field_pic_order_in_frame_present_flag
	w.ue(0)             // num_slice_groups_minus1
	w.ue(0)             // num_ref_idx_l0_default_active_minus1
	w.ue(0)             // num_ref_idx_l1_default_active_minus1
	w.flag(false)       // weighted_pred_flag
	w.u(2, 0)           // weighted_bipred_idc
	w.se(sliceQP - 26)  // pic_init_qp_minus26
	w.se(0)             // pic_init_qs_minus26
	w.se(chromaQPShift) // chroma_qp_index_offset
	w.flag(true)        // deblocking_filter_control_present_flag
	w.flag(false)       // constrained_intra_pred_flag
	w.flag(false)       // redundant_pic_cnt_present_flag
	w.trailing()
	return nalUnit(3, nalPPS, w.buf)
}

// yuv is the colour of a flat macroblock.
type yuv struct{ y, u, v uint8 }

// rgbToYUV converts to BT.709 limited range ("TV" levels), in integers.
func rgbToYUV(c rgb) yuv {
	r, g, b := int(c.r), int(c.g), int(c.b)
	y := 16 + (11966*r+40254*g+4064*b+32768)>>16
	u := 128 + (-6597*r-22187*g+28784*b+32768)>>16
	v := 128 + (28784*r-26148*g-2636*b+32768)>>16
	return yuv{uint8(y), uint8(u), uint8(v)}
}

// picture codes pictures of a fixed size from grids of palette indices
// and, for macroblocks holding text, their samples.
type picture struct {
	p       h264Params
	colours []yuv
	w       bitWriter
	// tile holds, for each macroblock of the current picture, its I_PCM
	// payload (256 luma then 64 Cb and 64 Cr samples), or nil for a flat
	// macroblock of its grid colour; nil for a video without text. Only
	// the macroblocks in dyn change from picture to picture; prevTile
	// holds their previous payloads, row by row of dyn.
	tile, prevTile [][]byte
	dyn            image.Rectangle
	// pcm marks the macroblocks coded as I_PCM in the current picture.
	pcm []bool
}

// pcmBytes is the size of an I_PCM payload in 8-bit 4:2:0.
const pcmBytes = 256 + 2*64

// lumaEdge describes the right column (col) or the bottom row of a
// macroblock's luma: the sum of its 16 samples and whether they are equal.
func lumaEdge(t []byte, col bool) (sum int, flat bool) {
	flat = true
	first := t[255]
	for i := 0; i < 16; i++ {
		v := t[240+i]
		if col {
			v = t[i*16+15]
		}
		sum += int(v)
		flat = flat && v == first
	}
	return sum, flat
}

// pcmMacroblock writes an I_PCM macroblock_layer.
func (pc *picture) pcmMacroblock(i int, inP bool) {
	w := &pc.w
	if inP {
		w.ue(5 + 25)
	} else {
		w.ue(25)
	}
	if w.n > 0 {
		w.u(8-w.n, 0) // pcm_alignment_zero_bit
	}
	w.buf = append(w.buf, pc.tile[i]...)
	pc.pcm[i] = true
}

// nC is the CAVLC context of the Intra16x16 DC block of macroblock (x, y):
// 0 unless a neighbour was coded as I_PCM in this picture (16 blocks of 16
// coefficients), see 9.2.1.
func (pc *picture) nC(x, y int) int {
	if pc.pcm == nil {
		return 0
	}
	i := y*pc.p.mbW + x
	nA, nB := 0, 0
	if x > 0 && pc.pcm[i-1] {
		nA = 16
	}
	if y > 0 && pc.pcm[i-pc.p.mbW] {
		nB = 16
	}
	switch {
	case x > 0 && y > 0:
		return (nA + nB + 1) >> 1
	case x > 0:
		return nA
	default:
		return nB
	}
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// coeff writes a residual block holding at most one coefficient, the DC
// one, with the CAVLC tables for nC 0..1 or 8 and more (luma: see nC) or
// nC -1 (chroma DC).
func (pc *picture) coeff(level int, nC int) {
	w := &pc.w
	chromaDC, fixedLen := nC < 0, nC >= 8
	if level == 0 {
		switch {
		case chromaDC:
			w.u(2, 0b01) // coeff_token: TotalCoeff 0
		case fixedLen:
			w.u(6, 0b000011)
		default:
			w.u(1, 0b1)
		}
		return
	}
	a := absInt(level)
	if a == 1 {
		// coeff_token: TotalCoeff 1, TrailingOnes 1; then its sign.
		switch {
		case chromaDC:
			w.u(1, 0b1)
		case fixedLen:
			w.u(6, 0b000001)
		default:
			w.u(2, 0b01)
		}
		w.flag(level < 0)
	} else {
		// coeff_token: TotalCoeff 1, TrailingOnes 0; then the level with
		// suffixLength 0, lowered by 2 as the first level after fewer
		// than three trailing ones cannot be +-1.
		switch {
		case chromaDC:
			w.u(6, 0b000111)
		case fixedLen:
			w.u(6, 0b000000)
		default:
			w.u(6, 0b000101)
		}
		code := 2*a - 2
		if level < 0 {
			code = 2*a - 1
		}
		code -= 2
		switch {
		case code < 14:
			w.u(uint(code), 0)
			w.u(1, 1)
		case code < 30:
			w.u(14, 0)
			w.u(1, 1)
			w.u(4, uint64(code-14))
		default: // |level| <= 255 keeps code - 30 within 12 bits
			w.u(15, 0)
			w.u(1, 1)
			w.u(12, uint64(code-30))
		}
	}
	w.u(1, 1) // total_zeros 0 (TotalCoeff 1, 4x4 and chroma DC tables alike)
}

// macroblock writes one Intra 16x16 macroblock_layer for cell (x, y) of grid,
// predicting from its left and top neighbours, which hold their final
// colours. inP adds the offset of intra types in P slices.
func (pc *picture) macroblock(grid []uint8, x, y int, inP bool) {
	mbW := pc.p.mbW
	i := y*mbW + x
	t := pc.colours[grid[i]]
	hasL, hasT := x > 0, y > 0
	var l, tp yuv
	// Luma edges of the neighbours: sums of 16 samples, and whether flat.
	var lSum, tSum int
	lFlat, tFlat := hasL, hasT
	if hasL {
		l = pc.colours[grid[i-1]]
		lSum = 16 * int(l.y)
		if pc.tile != nil && pc.tile[i-1] != nil {
			lSum, lFlat = lumaEdge(pc.tile[i-1], true)
		}
	}
	if hasT {
		tp = pc.colours[grid[i-mbW]]
		tSum = 16 * int(tp.y)
		if pc.tile != nil && pc.tile[i-mbW] != nil {
			tSum, tFlat = lumaEdge(pc.tile[i-mbW], false)
		}
	}

	// Luma: 0 vertical, 1 horizontal, 2 DC. With flat edges the DC
	// prediction is (l + t + 1) >> 1, l or t.
	lumaMode, lumaPred := 2, 128
	switch {
	case hasL && hasT:
		lumaPred = (lSum + tSum + 16) >> 5
	case hasL:
		lumaPred = (lSum + 8) >> 4
	case hasT:
		lumaPred = (tSum + 8) >> 4
	}
	best := absInt(int(t.y) - lumaPred)
	if tFlat && absInt(int(t.y)-tSum/16) <= best {
		lumaMode, lumaPred, best = 0, tSum/16, absInt(int(t.y)-tSum/16)
	}
	if lFlat && absInt(int(t.y)-lSum/16) < best {
		lumaMode, lumaPred = 1, lSum/16
	}

	// Chroma: 0 DC (only when it is flat), 1 horizontal, 2 vertical.
	chromaMode, pu, pv, cost := -1, 0, 0, 1<<30
	try := func(mode int, c yuv) {
		if d := absInt(int(t.u)-int(c.u)) + absInt(int(t.v)-int(c.v)); d < cost {
			chromaMode, pu, pv, cost = mode, int(c.u), int(c.v), d
		}
	}
	switch {
	case !hasL && !hasT:
		try(0, yuv{128, 128, 128})
	case !hasT:
		try(0, l)
	case !hasL:
		try(0, tp)
	case l.u == tp.u && l.v == tp.v:
		try(0, l)
	}
	if hasL {
		try(1, l)
	}
	if hasT {
		try(2, tp)
	}

	dy, du, dv := int(t.y)-lumaPred, int(t.u)-pu, int(t.v)-pv
	cbpChroma := 0
	if du != 0 || dv != 0 {
		cbpChroma = 1
	}
	mbType := 1 + lumaMode + 4*cbpChroma // I_16x16_<mode>_<cbp chroma>_0
	if inP {
		mbType += 5
	}
	w := &pc.w
	w.ue(uint64(mbType))
	w.ue(uint64(chromaMode))  // intra_chroma_pred_mode
	w.se(0)                   // mb_qp_delta
	pc.coeff(dy, pc.nC(x, y)) // Intra16x16DCLevel; no AC (cbp luma 0)
	if cbpChroma != 0 {
		pc.coeff(du, -1) // Cb DC
		pc.coeff(dv, -1) // Cr DC
	}
}

// idr codes grid as an IDR picture and returns the NAL unit.
func (pc *picture) idr(grid []uint8, idrID int) []byte {
	return nalUnit(3, nalIDR, pc.idrRBSP(grid, idrID))
}

// idrRBSP codes grid as an IDR picture and returns the RBSP, valid until
// the next picture is coded.
func (pc *picture) idrRBSP(grid []uint8, idrID int) []byte {
	pc.w = bitWriter{buf: pc.w.buf[:0]}
	w := &pc.w
	w.ue(0)              // first_mb_in_slice
	w.ue(7)              // slice_type: I (all slices)
	w.ue(0)              // pic_parameter_set_id
	w.u(log2MaxFrame, 0) // frame_num
	w.ue(uint64(idrID))  // idr_pic_id
	w.flag(false)        // no_output_of_prior_pics_flag
	w.flag(false)        // long_term_reference_flag
	w.se(0)              // slice_qp_delta
	w.ue(1)              // disable_deblocking_filter_idc: off
	clear(pc.pcm)
	for y := 0; y < pc.p.mbH; y++ {
		for x := 0; x < pc.p.mbW; x++ {
			if pc.tile != nil && pc.tile[y*pc.p.mbW+x] != nil {
				pc.pcmMacroblock(y*pc.p.mbW+x, false)
				continue
			}
			pc.macroblock(grid, x, y, false)
		}
	}
	w.trailing()
	return w.buf
}

// pFrame codes grid as a P picture predicted from prev (the previous grid)
// and returns the NAL unit. A nil prev means the grid did not change. Flat
// macroblocks whose colour did not change and text macroblocks whose
// samples did not change are skipped.
func (pc *picture) pFrame(grid, prev []uint8, frameNum int) []byte {
	return nalUnit(2, nalSlice, pc.pRBSP(grid, prev, frameNum))
}

// pRBSP codes a P picture (see pFrame) and returns the RBSP, valid until
// the next picture is coded.
func (pc *picture) pRBSP(grid, prev []uint8, frameNum int) []byte {
	pc.w = bitWriter{buf: pc.w.buf[:0]}
	w := &pc.w
	w.ue(0)                             // first_mb_in_slice
	w.ue(5)                             // slice_type: P (all slices)
	w.ue(0)                             // pic_parameter_set_id
	w.u(log2MaxFrame, uint64(frameNum)) // frame_num
	w.flag(false)                       // num_ref_idx_active_override_flag
	w.flag(false)                       // ref_pic_list_modification_flag_l0
	w.flag(false)                       // adaptive_ref_pic_marking_mode_flag
	w.se(0)                             // slice_qp_delta
	w.ue(1)                             // disable_deblocking_filter_idc: off
	skip := uint64(0)
	if prev == nil && pc.tile == nil {
		skip = uint64(pc.p.mbW * pc.p.mbH)
	}
	clear(pc.pcm)
	for y := 0; y < pc.p.mbH && (prev != nil || pc.tile != nil); y++ {
		row := y * pc.p.mbW
		inDyn := pc.tile != nil && y >= pc.dyn.Min.Y && y < pc.dyn.Max.Y
		if !inDyn && (prev == nil || string(grid[row:row+pc.p.mbW]) == string(prev[row:row+pc.p.mbW])) {
			skip += uint64(pc.p.mbW) // the whole row is unchanged
			continue
		}
		for x := 0; x < pc.p.mbW; x++ {
			i := row + x
			same := prev == nil || grid[i] == prev[i]
			if same && inDyn && x >= pc.dyn.Min.X && x < pc.dyn.Max.X {
				same = sameTile(pc.tile[i], pc.prevTile[(y-pc.dyn.Min.Y)*pc.dyn.Dx()+x-pc.dyn.Min.X])
			}
			if same {
				skip++
				continue
			}
			w.ue(skip) // mb_skip_run
			skip = 0
			if pc.tile != nil && pc.tile[i] != nil {
				pc.pcmMacroblock(i, true)
			} else {
				pc.macroblock(grid, x, y, true)
			}
		}
	}
	if skip > 0 {
		w.ue(skip)
	}
	w.trailing()
	return w.buf
}

// sameTile reports whether two macroblocks' text samples are the same.
func sameTile(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return &a[0] == &b[0] || string(a) == string(b)
}
