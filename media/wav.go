package media

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// WAV output: mono 16-bit PCM at 8 kHz, 16000 bytes a second.
const (
	wavRate     = 8000
	wavChannels = 1
	wavBits     = 16
	wavHeader   = 44
	wavPeak     = 26000 // peak sample after normalisation (-2 dB)
)

// sinTab is one period of a sine, 4096 steps, amplitude 32767. It is
// computed with integer arithmetic (a Taylor series in 2.30 fixed point), so
// it is the same on every platform.
var sinTab = makeSinTab()

func makeSinTab() *[4096]int32 {
	const q = 30
	const piQ = 3373259426 // pi * 2^30
	var t [4096]int32
	for i := 0; i <= 1024; i++ {
		x := int64(i) * piQ / 2048 // i/1024 of pi/2
		x2 := x * x >> q
		term, sum := x, x
		for k := int64(1); k <= 8; k++ {
			term = -(term * x2 >> q) / ((2 * k) * (2*k + 1))
			sum += term
		}
		v := int32((sum*32767 + 1<<(q-1)) >> q)
		t[i] = v           // [0, pi/2]
		t[2048-i] = v      // [pi/2, pi]
		t[(2048 + i)] = -v // [pi, 3pi/2]
		if i > 0 {
			t[4096-i] = -v // [3pi/2, 2pi)
		}
	}
	return &t
}

// sinQ15 returns the sine of a phase given in 1/2^32 of a turn.
func sinQ15(phase uint32) int32 { return sinTab[phase>>20] }

// phaseInc returns the phase increment per sample of a frequency in
// 1/16 Hz.
func phaseInc(freq16 int64) uint32 {
	return uint32(freq16 << 32 / (16 * wavRate))
}

// semitoneQ30 holds 2^(i/12) in 2.30 fixed point.
var semitoneQ30 = [12]int64{1073741824, 1137589835, 1205234447, 1276901417, 1352829926, 1433273380,
	1518500250, 1608794974, 1704458901, 1805811301, 1913190429, 2026954652}

// midiInc returns the phase increment of a MIDI note (69 is A 440 Hz).
func midiInc(note int) uint32 {
	const a440 = 236223201 // 440 Hz at 8 kHz in 1/2^32 of a turn a sample
	d := note - 69
	oct, semi := d/12, d%12
	if semi < 0 {
		semi += 12
		oct--
	}
	inc := a440 * semitoneQ30[semi] >> 30
	if oct >= 0 {
		inc <<= uint(oct)
	} else {
		inc >>= uint(-oct)
	}
	return uint32(min(inc, 1<<31-1))
}

// noise is a xorshift32 white noise source.
type noise uint32

func (n *noise) next() int32 {
	x := uint32(*n)
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	*n = noise(x)
	return int32(x>>16) - 32768
}

// generateWAV synthesises s.DurationSeconds of speech-like or music-like
// sound and returns it as a WAV file.
func generateWAV(s Spec) ([]byte, error) {
	n := s.DurationSeconds * wavRate
	mix := make([]int32, n)
	if s.Voice {
		synthVoice(mix, newRNG(s.Seed, s.Prompt, "voice"))
	} else {
		synthMusic(mix, newRNG(s.Seed, s.Prompt, "music"))
	}
	data := n * wavChannels * wavBits / 8
	out := make([]byte, wavHeader, wavHeader+data)
	copy(out[0:], "RIFF")
	binary.LittleEndian.PutUint32(out[4:], uint32(36+data))
	copy(out[8:], "WAVE")
	copy(out[12:], "fmt ")
	binary.LittleEndian.PutUint32(out[16:], 16) // fmt chunk size
	binary.LittleEndian.PutUint16(out[20:], 1)  // PCM
	binary.LittleEndian.PutUint16(out[22:], wavChannels)
	binary.LittleEndian.PutUint32(out[24:], wavRate)
	binary.LittleEndian.PutUint32(out[28:], wavRate*wavChannels*wavBits/8) // byte rate
	binary.LittleEndian.PutUint16(out[32:], wavChannels*wavBits/8)         // block align
	binary.LittleEndian.PutUint16(out[34:], wavBits)
	copy(out[36:], "data")
	binary.LittleEndian.PutUint32(out[40:], uint32(data))

	var peak int64
	for _, v := range mix {
		peak = max(peak, int64(v), -int64(v))
	}
	for _, v := range mix {
		if peak > 0 {
			v = int32(int64(v) * wavPeak / peak)
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(int16(v)))
	}
	if len(out) != wavHeader+data {
		return nil, fmt.Errorf("media: WAV of %d s: wrote %d bytes, want %d", s.DurationSeconds, len(out), wavHeader+data)
	}
	if !s.Label.empty() {
		out = appendInfo(out, s.Label)
		binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-8))
	}
	return out, nil
}

// appendInfo appends a LIST/INFO chunk after the data chunk: the label as
// the title (INAM) and the software (ISFT), which players and ffprobe
// show as tags. It comes last so that readers that expect the samples at
// byte 44 still find them there.
func appendInfo(out []byte, l Label) []byte {
	sub := func(b []byte, id, text string) []byte {
		v := append([]byte(strings.ToValidUTF8(text, "?")), 0)
		if len(v)%2 != 0 {
			v = append(v, 0)
		}
		b = append(b, id...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	info := []byte("INFO")
	info = sub(info, "INAM", l.String())
	info = sub(info, "ISFT", "mediamock")
	out = append(out, "LIST"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(info)))
	return append(out, info...)
}

// --- Speech-like synthesis ---------------------------------------------------

// vowel formants F1-F3 in Hz.
type vowel struct{ f1, f2, f3 int64 }

var vowels = []vowel{
	{730, 1090, 2440}, // a
	{270, 2290, 3010}, // i
	{300, 870, 2240},  // u
	{530, 1840, 2480}, // e
	{570, 840, 2410},  // o
	{660, 1720, 2410}, // ae
	{490, 1350, 1690}, // er
	{640, 1190, 2390}, // uh
}

// syllable is one planned syllable of a phrase.
type syllable struct {
	onset    int // 0 none, 1 fricative, 2 plosive
	length   int // voiced part, samples
	gapAfter int // silence after, samples
	vowel    vowel
	stress   bool
}

// synthVoice fills out with phrases of syllables: a harmonic source at a
// gliding pitch, shaped by the formants of moving vowels, with fricative
// noise and plosive bursts at some onsets.
func synthVoice(out []int32, r *rng) {
	n := len(out)
	var base int64 // pitch in 1/16 Hz
	if r.intn(2) == 0 {
		base = int64(r.between(95, 130)) * 16
	} else {
		base = int64(r.between(175, 225)) * 16
	}
	tempo := r.between(85, 115) // speaking speed, percent
	hiss := noise(uint32(r.next()) | 1)
	pos := r.between(wavRate/8, wavRate/3)
	prev := vowels[r.intn(len(vowels))]
	var phase uint32
	var amps [48]int64

	for pos < n {
		// Plan a phrase.
		var plan []syllable
		for words := r.between(2, 7); words > 0; words-- {
			sylls := r.between(1, 3)
			stressed := r.intn(sylls)
			for i := 0; i < sylls; i++ {
				sy := syllable{
					onset:  r.intn(3),
					length: r.between(wavRate*13/100, wavRate*24/100) * 100 / tempo,
					vowel:  vowels[r.intn(len(vowels))],
					stress: i == stressed,
				}
				if sy.stress {
					sy.length = sy.length * 5 / 4
				}
				if i == sylls-1 {
					sy.gapAfter = r.between(wavRate*3/100, wavRate*12/100)
				} else {
					sy.gapAfter = r.between(0, wavRate/100)
				}
				plan = append(plan, sy)
			}
		}
		question := r.intn(5) == 0

		for i, sy := range plan {
			if pos >= n {
				return
			}
			// Consonant onset.
			switch sy.onset {
			case 1: // fricative: high-passed noise
				l := r.between(wavRate*4/100, wavRate*8/100)
				var last int32
				for j := 0; j < l && pos+j < n; j++ {
					x := hiss.next()
					env := int64(min(j, l-j, 120))
					out[pos+j] += int32(int64(x-last) * env / 120 / 5)
					last = x
				}
				pos += l
			case 2: // plosive: closure then a short burst
				pos += r.between(wavRate*2/100, wavRate*4/100)
				l := wavRate / 100
				for j := 0; j < l && pos+j < n; j++ {
					out[pos+j] += hiss.next() * int32(l-j) / int32(l) / 3
				}
				pos += l
			}

			// Pitch: declination over the phrase, a rise on stress and on
			// the last syllable of a question.
			pct := int64(112 - 22*i/max(1, len(plan)-1))
			if question && i == len(plan)-1 {
				pct += 25
			}
			const block = wavRate / 100
			for j := 0; j < sy.length && pos+j < n; j += block {
				p := int64(j) * 1000 / int64(sy.length) // progress, 1/1000
				bump := int64(0)
				if sy.stress {
					bump = 10 * int64(sinQ15(uint32(p*(1<<31)/1000))) / 32767
				}
				glide := int64(0)
				if question && i == len(plan)-1 {
					glide = 20 * p / 1000
				}
				f0 := base * (pct + bump + glide - 4*p/1000) / 100
				// Formants move from the previous vowel during the first 30%.
				k := min(p, 300)
				f1 := (prev.f1*(300-k) + sy.vowel.f1*k) / 300
				f2 := (prev.f2*(300-k) + sy.vowel.f2*k) / 300
				f3 := (prev.f3*(300-k) + sy.vowel.f3*k) / 300
				nh := 0
				for h := int64(1); h < int64(len(amps)) && h*f0 < 3500*16; h++ {
					f := h * f0 / 16
					a := formant(f, f1, 90, 4096) + formant(f, f2, 110, 2600) + formant(f, f3, 170, 1300)
					amps[h] = a * 10 / (h + 9) // gentle source tilt
					nh = int(h)
				}
				inc := phaseInc(f0)
				for s := j; s < min(j+block, sy.length) && pos+s < n; s++ {
					phase += inc
					var acc int64
					for h := 1; h <= nh; h++ {
						acc += amps[h] * int64(sinQ15(phase*uint32(h)))
					}
					env := int64(min(s, sy.length-s, 240))
					out[pos+s] += int32(acc >> 12 * env / 240)
				}
			}
			pos += sy.length + sy.gapAfter
			prev = sy.vowel
		}
		pos += r.between(wavRate/4, wavRate*3/5) // pause between phrases
	}
}

// formant returns the gain (gain at the centre, falling off as a resonance of
// the given bandwidth) of a formant at frequency f, all in Hz.
func formant(f, centre, bandwidth, gain int64) int64 {
	d := f - centre
	b2 := bandwidth * bandwidth
	return gain * b2 / (d*d + b2)
}

// --- Music-like synthesis ----------------------------------------------------

var (
	majorScale = [7]int{0, 2, 4, 5, 7, 9, 11}
	minorScale = [7]int{0, 2, 3, 5, 7, 8, 10}
	majorProgs = [][4]int{{0, 4, 5, 3}, {0, 3, 4, 4}, {5, 3, 0, 4}, {0, 5, 3, 4}, {1, 4, 0, 0}}
	minorProgs = [][4]int{{0, 5, 2, 6}, {0, 3, 4, 0}, {0, 6, 5, 6}, {0, 2, 3, 4}}
)

// tone is one note to add to the mix.
type tone struct {
	start, length int
	note          int
	amp           int64   // peak, in sample units
	harmonics     []int64 // weights of harmonics 1, 2, ... in 1/4096
	attack        int     // samples
	decay         int     // time constant of a plucked note, samples; 0: held note
}

// add mixes the tone into out.
func (t tone) add(out []int32) {
	inc := midiInc(t.note)
	var phase uint32
	env := int64(1) << 24 // 1.0 in 8.24 once the attack is over
	var decay int64
	if t.decay > 0 {
		decay = (1 << 16) * int64(t.decay-1) / int64(t.decay)
	}
	release := min(t.length/3, wavRate/4)
	for i := 0; i < t.length && t.start+i < len(out); i++ {
		if t.start+i < 0 {
			continue
		}
		phase += inc
		var acc int64
		for h, w := range t.harmonics {
			acc += w * int64(sinQ15(phase*uint32(h+1)))
		}
		e := env
		if i < t.attack {
			e = env * int64(i) / int64(t.attack)
		}
		if t.decay == 0 && i > t.length-release {
			e = e * int64(t.length-i) / int64(release)
		} else if t.decay > 0 && i >= t.attack {
			env = env * decay >> 16
		}
		out[t.start+i] += int32((acc >> 12) * t.amp >> 15 * (e >> 12) >> 12)
	}
}

// synthMusic fills out with a loop of four chords: a held pad, a bass line,
// a plucked melody on the scale and a light drum pattern.
func synthMusic(out []int32, r *rng) {
	n := len(out)
	bpm := r.between(84, 132)
	beat := wavRate * 60 / bpm
	eighth := beat / 2
	root := r.between(45, 56) // MIDI note of the tonic, around A2..G#3
	scale, progs := majorScale, majorProgs
	if r.intn(2) == 0 {
		scale, progs = minorScale, minorProgs
	}
	prog := progs[r.intn(len(progs))]
	midi := func(degree int) int { return root + 12*(degree/7) + scale[degree%7] }
	padTimbre := []int64{4096, 1200, 300}
	bassTimbre := []int64{4096, 1600}
	leadTimbre := [][]int64{{4096, 2048, 1024}, {4096, 0, 1365, 0, 819}, {4096, 2900, 600, 300}}[r.intn(3)]
	hiss := noise(uint32(r.next()) | 1)
	melody := 7 + r.intn(5)
	bar := 4 * beat
	for b := 0; b*bar < n; b++ {
		start := b * bar
		deg := prog[b%4]
		// Pad: the triad, held for the bar.
		for _, d := range []int{deg, deg + 2, deg + 4} {
			tone{start: start, length: bar, note: midi(d) + 12, amp: 3000, harmonics: padTimbre, attack: wavRate / 10}.add(out)
		}
		// Bass on beats 1 and 3.
		for _, bt := range []int{0, 2} {
			tone{start: start + bt*beat, length: 2 * beat, note: midi(deg) - 12, amp: 9000, harmonics: bassTimbre, attack: 40, decay: wavRate * 2 / 5}.add(out)
		}
		// Melody on eighths, leaning on chord tones on the beats.
		for e := 0; e < 8; e++ {
			if r.intn(10) >= 6 {
				continue
			}
			melody += r.between(-2, 2)
			melody = min(max(melody, 7), 16)
			if e%2 == 0 && r.intn(2) == 0 {
				// Snap to the nearest chord tone above the chord root.
				for _, c := range []int{deg, deg + 2, deg + 4, deg + 7, deg + 9, deg + 11, deg + 14} {
					if c >= melody {
						melody = min(c, 16)
						break
					}
				}
			}
			l := eighth * r.between(1, 2)
			tone{start: start + e*eighth, length: l + eighth, note: midi(melody) + 12, amp: 8000, harmonics: leadTimbre, attack: 30, decay: wavRate / 4}.add(out)
		}
		// Drums: kick on 1 and 3, snare on 2 and 4, hats on eighths.
		for bt := 0; bt < 4; bt++ {
			at := start + bt*beat
			if bt%2 == 0 {
				kick(out, at)
			} else {
				drumNoise(out, at, wavRate/8, 7000, &hiss)
			}
		}
		for e := 0; e < 8; e++ {
			drumNoise(out, start+e*eighth, wavRate/40, 2500, &hiss)
		}
	}
	// Fade the last half second out.
	fade := min(n, wavRate/2)
	for i := 0; i < fade; i++ {
		out[n-1-i] = int32(int64(out[n-1-i]) * int64(i) / int64(fade))
	}
}

// kick adds a bass drum: a sine sweeping down from 150 Hz, decaying.
func kick(out []int32, at int) {
	l := wavRate * 15 / 100
	var phase uint32
	for i := 0; i < l && at+i < len(out); i++ {
		f := int64(50*16) + int64(100*16)*int64(l-i)*int64(l-i)/int64(l*l)
		phase += phaseInc(f)
		out[at+i] += int32(int64(sinQ15(phase)) * 14000 / 32767 * int64(l-i) / int64(l))
	}
}

// drumNoise adds a burst of high-passed noise (snare, hi-hat).
func drumNoise(out []int32, at, l int, amp int64, src *noise) {
	var last int32
	for i := 0; i < l && at+i < len(out); i++ {
		x := src.next()
		out[at+i] += int32(int64(x-last) / 2 * amp / 32767 * int64(l-i) / int64(l))
		last = x
	}
}
