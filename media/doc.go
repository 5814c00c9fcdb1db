// Package media generates deterministic media files for the mock server.
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
// Format choices:
//
//   - Images (image/png, image/jpeg) are a banded gradient background with a
//     few flat shapes (circles, rings, rectangles, diamonds, triangles, striped
//     bars), drawn span by span into a paletted image. PNG is written from the
//     paletted image with png.BestSpeed: flat rows compress to a few tens of
//     kilobytes and a 2048x2048 picture encodes in a few milliseconds. JPEG is
//     written from a 4:2:0 YCbCr image at quality 80.
//
//   - Video (video/mp4) is an MP4 (ISO BMFF, "moov" before "mdat") holding one
//     H.264 Constrained Baseline track at 10 frames per second, written by
//     this package: there is no pure-Go H.264 encoder. Every picture is made
//     of flat 16x16 macroblocks. Key frames (IDR, one per second; longer
//     intervals only for huge or very long videos) code each macroblock as
//     Intra 16x16 with vertical, horizontal or DC prediction and, when the
//     prediction misses the wanted colour, a single DC coefficient per plane
//     (CAVLC, QP 28, which makes one level exactly one sample value); other
//     frames are P frames in which unchanged macroblocks are skipped and the
//     macroblocks a moving shape covers or uncovers are coded as intra
//     macroblocks. Sizes that are not multiples of 16 use SPS frame cropping,
//     so the width and height must be even (4:2:0). Colours are BT.709,
//     limited range, signalled in the VUI. A 1080p 8 s file is about 60 KB.
//     When Spec.Audio is set the file also carries an AAC-LC track (48 kHz,
//     mono) of silent frames: a silent AAC frame is four fixed bytes, while
//     audible AAC would need a real encoder. The audio is therefore silence.
//
//   - Audio (audio/wav) is RIFF/WAVE PCM, mono, 8 kHz, 16-bit (16000 bytes a
//     second: 120 s is 1.9 MB). Voice is synthesised from a harmonic source
//     shaped by moving vowel formants, in syllables, words and phrases with
//     an intonation contour and a little fricative noise; music is a chord
//     pad, a bass line and a plucked melody on a scale, key and tempo chosen
//     by the seed. The synthesis uses fixed-point arithmetic only.
//
//   - 3D (model/gltf-binary) is a binary glTF 2.0 file (GLB) with one mesh
//     (a box, pyramid, octahedron or prism, with flat normals), one material
//     with a base colour, one node and one scene. Positions are multiples of
//     1/1024 so that the accessor min/max written in the JSON are exact.
package media
