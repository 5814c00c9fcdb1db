package media

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// wavSamples checks the header of a WAV file written by Generate and
// returns its samples.
func wavSamples(t *testing.T, s Spec, data []byte) []int16 {
	t.Helper()
	le16 := func(off int) int { return int(binary.LittleEndian.Uint16(data[off:])) }
	le32 := func(off int) int { return int(binary.LittleEndian.Uint32(data[off:])) }
	if len(data) < 44 {
		t.Fatalf("%d bytes: no WAV header", len(data))
	}
	if string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" || string(data[12:16]) != "fmt " || string(data[36:40]) != "data" {
		t.Fatalf("header % x: want RIFF/WAVE with fmt and data chunks", data[:44])
	}
	if le32(4) != len(data)-8 {
		t.Errorf("RIFF size %d, want %d", le32(4), len(data)-8)
	}
	format, channels, rate, byteRate, align, bits := le16(20), le16(22), le32(24), le32(28), le16(32), le16(34)
	if le32(16) != 16 || format != 1 {
		t.Errorf("fmt chunk of %d bytes, format %d: want 16 bytes of PCM (1)", le32(16), format)
	}
	bytesPerSample := bits / 8
	if channels != 1 || rate != wavRate || bits != 16 || align != channels*bytesPerSample || byteRate != rate*align {
		t.Errorf("fmt: %d channels, %d Hz, %d bits, align %d, byte rate %d", channels, rate, bits, align, byteRate)
	}
	want := rate * channels * bytesPerSample * s.DurationSeconds
	if le32(40) != want || len(data) != 44+want {
		t.Fatalf("data chunk %d bytes (file %d), want %d", le32(40), len(data), want)
	}
	out := make([]int16, want/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(data[44+2*i:]))
	}
	return out
}

func TestWAV(t *testing.T) {
	for _, voice := range []bool{true, false} {
		for _, sec := range []int{1, 2, 7, 60, 120} {
			s := Spec{MimeType: "audio/wav", DurationSeconds: sec, Seed: 3, Prompt: "a calm narration", Voice: voice}
			data, err := Generate(s)
			if err != nil {
				t.Fatalf("%d s: %v", sec, err)
			}
			samples := wavSamples(t, s, data)
			peak := 0
			for _, v := range samples {
				peak = max(peak, absInt(int(v)))
			}
			if peak != wavPeak {
				t.Errorf("voice=%v %d s: peak %d, want %d", voice, sec, peak, wavPeak)
			}
			if sec == 120 && len(data) > 2_000_000 {
				t.Errorf("120 s WAV is %d bytes, want at most 2 MB", len(data))
			}
		}
	}
}

func TestWAVDeterministicAndDistinct(t *testing.T) {
	gen := func(s Spec) []byte {
		t.Helper()
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, voice := range []bool{true, false} {
		base := Spec{MimeType: "audio/wav", DurationSeconds: 5, Seed: 1, Prompt: "hello there", Voice: voice}
		a := gen(base)
		if !bytes.Equal(a, gen(base)) {
			t.Errorf("voice=%v: the same spec gave different bytes", voice)
		}
		for _, o := range []Spec{
			{MimeType: "audio/wav", DurationSeconds: 5, Seed: 1, Prompt: "general kenobi", Voice: voice},
			{MimeType: "audio/wav", DurationSeconds: 5, Seed: 2, Prompt: "hello there", Voice: voice},
			{MimeType: "audio/wav", DurationSeconds: 5, Seed: 1, Prompt: "hello there", Voice: !voice},
		} {
			if bytes.Equal(a, gen(o)) {
				t.Errorf("%+v gave the same bytes as %+v", o, base)
			}
		}
	}
}

// TestWAVCharacter checks the two syntheses sound like what they claim in
// a crude way: speech pauses between phrases, music keeps playing.
func TestWAVCharacter(t *testing.T) {
	longestQuiet := func(samples []int16) int {
		const win = wavRate / 20 // 50 ms windows
		best, run := 0, 0
		for i := 0; i+win <= len(samples)-wavRate/2; i += win { // skip the fade-out
			var energy int64
			for _, v := range samples[i : i+win] {
				energy += int64(v) * int64(v)
			}
			if energy/win < 100*100 {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
		return best * 50 // ms
	}
	for seed := uint64(1); seed <= 4; seed++ {
		v := Spec{MimeType: "audio/wav", DurationSeconds: 10, Seed: seed, Prompt: "narration", Voice: true}
		m := Spec{MimeType: "audio/wav", DurationSeconds: 10, Seed: seed, Prompt: "narration"}
		vd, err := Generate(v)
		if err != nil {
			t.Fatal(err)
		}
		md, err := Generate(m)
		if err != nil {
			t.Fatal(err)
		}
		if q := longestQuiet(wavSamples(t, v, vd)); q < 200 {
			t.Errorf("seed %d: voice has no pause of 200 ms (longest %d ms)", seed, q)
		}
		if q := longestQuiet(wavSamples(t, m, md)); q > 100 {
			t.Errorf("seed %d: music is silent for %d ms", seed, q)
		}
	}
}

func TestSinTable(t *testing.T) {
	if sinTab[0] != 0 || sinTab[1024] != 32767 || sinTab[2048] != 0 || sinTab[3072] != -32767 {
		t.Errorf("sin table corners %d %d %d %d", sinTab[0], sinTab[1024], sinTab[2048], sinTab[3072])
	}
	if v := sinTab[512]; v < 23169 || v > 23171 { // sin(pi/4) * 32767 = 23169.8
		t.Errorf("sin(pi/4) = %d", v)
	}
	for i := 1; i < 2048; i++ {
		if sinTab[i] != -sinTab[4096-i] || sinTab[i] != sinTab[2048-i] {
			t.Fatalf("sin table not symmetric at %d", i)
		}
	}
	if got := midiInc(69); got != 236223201 {
		t.Errorf("A4 increment %d", got)
	}
	if a, b := midiInc(57), midiInc(81); a != midiInc(69)/2 || b != midiInc(69)*2 {
		t.Errorf("octaves: %d %d", a, b)
	}
}
