// Package media makes and inspects the files behind asset URLs: Sniff
// detects the type of an uploaded image from its bytes and reads its size
// from the header, and Generate makes deterministic images, videos, audio
// and 3D models of the size and length an asset claims.
//
// Generate turns a Spec into the bytes of a file: the same Spec always gives
// byte-identical output (on a given Go release: the PNG and JPEG encoders of
// the standard library are part of the output), and two prompts give visibly
// or audibly different files. Every random choice comes from a small
// SplitMix64 generator seeded with the Spec's Seed and an FNV-1a hash of its
// Prompt. The code uses integer arithmetic wherever a rounding difference
// between CPU architectures (fused multiply-add) could change the bytes.
// No cgo, no external tools, no network and no clock are used.
//
// A Spec's Label says what the file is. Images and video frames show it as
// an opaque dark bar across the bottom: the id and the model in bold, the
// size and type, and up to two lines of the prompt, drawn with the Go fonts
// (golang.org/x/image/font/gofont through opentype) at sizes relative to
// the picture's shorter side, so that it reads at a fifth of the size.
// Glyph coverage is quantised to 16 levels: images stay paletted, and the
// float32 arithmetic of the rasteriser would have to be off by a whole
// level to change a byte. Faces and their glyphs are cached per size for
// the life of the process. Video frames add a timecode and frame number
// ("00:03.4  frame 34"), and use a smaller label (about two thirds) as its
// text is coded raw. WAV files carry the label as their title in a
// LIST/INFO chunk after the samples; GLB files in the scene and node names
// and the asset's extras. Poster, Waveform and ModelPreview draw pictures
// of videos, audio and 3D models for the dashboard.
//
// Format choices:
//
//   - Images (image/png, image/jpeg) are a banded gradient background with a
//     few flat shapes (circles, rings, rectangles, diamonds, triangles, striped
//     bars), drawn span by span into a paletted image. PNG is written from the
//     paletted image (no row filters) with png.BestSpeed: the flat rows
//     compress well, a 2048x2048 picture is 15 to 90 kB and is drawn and
//     encoded in about 15 ms. JPEG (baseline, 4:2:0, quality 80, the
//     standard tables) is written by this package's own encoder, which codes
//     the uniform 8x8 blocks of these pictures without a transform and the
//     others with an integer DCT: it gives what image/jpeg gives at the same
//     quality (same size and error, checked by the tests) about five times
//     faster, about 15 ms for 1536x2048.
//
//   - Video (video/mp4) is an MP4 (ISO BMFF, "moov" before "mdat", one
//     chunk a second per track) holding one H.264 Constrained Baseline track
//     at 10 frames per second, written by this package: there is no pure-Go
//     H.264 encoder. Pictures are drawn in flat 16x16 macroblocks (the
//     shapes look blocky and move in 16-pixel steps). Key frames (IDR) come
//     every 2 seconds, further apart only for huge or very long videos; they
//     code each macroblock as Intra 16x16 with vertical, horizontal or DC
//     prediction and, when the prediction misses the wanted colour, a single
//     DC coefficient per plane (CAVLC, QP 28, where one level is exactly one
//     sample value, so the decoded picture is known exactly and deblocking
//     can be turned off). The other frames are P frames in which unchanged
//     macroblocks are skipped and those a moving shape covers or uncovers are
//     coded as intra macroblocks; huge or very long videos do not move.
//     Sizes that are not multiples of 16 use SPS frame cropping, so width and
//     height must be even (4:2:0). The label's macroblocks that hold text
//     are coded as I_PCM (their samples as they are, so the text decodes
//     exactly); a flat macroblock next to one predicts from its real edge
//     samples. Every key frame repeats them (about 150 kB at 1080p), so a
//     labelled video has a key frame every 10 seconds; each frame re-codes
//     only the macroblocks of the timecode digits that changed. Colours are BT.709, limited range,
//     signalled in the VUI with the frame rate. A 1080p 8 s file is about
//     50 kB (under 80 kB for any seed tried) without a label, about 400 kB
//     with one. When Spec.Audio is set the file
//     also holds an AAC-LC track (48 kHz, mono) made of silent frames: a
//     silent AAC frame is four fixed bytes, audible AAC would need a real
//     encoder. So the audio track is silence.
//
//   - Audio (audio/wav) is RIFF/WAVE PCM, mono, 8 kHz, 16-bit (16000 bytes a
//     second: 120 s is 1.9 MB). Voice is synthesised from a harmonic source
//     shaped by moving vowel formants, in syllables, words and phrases with
//     an intonation contour, fricative noise and plosive bursts; music is a
//     chord pad, a bass line, a plucked melody and a light drum pattern, on
//     a scale, key, chord loop and tempo chosen by the seed. The synthesis
//     uses fixed-point arithmetic only; the result is normalised to -2 dBFS.
//
//   - 3D (model/gltf-binary) is a binary glTF 2.0 file (GLB) with one mesh
//     (a box, pyramid, octahedron or prism, with flat normals), one material
//     with a base colour, one node and one scene. Positions are multiples of
//     1/1024 so that the accessor min/max written in the JSON are exact.
package media
