package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/seed"
)

// Models returns the catalog, filtered by modality and track ("" for all).
func (e *Engine) Models(modality, track string) []fixtures.Model {
	var out []fixtures.Model
	for _, m := range e.world.Models {
		if modality != "" && m.Modality != modality {
			continue
		}
		if track != "" && m.Track != track {
			continue
		}
		out = append(out, m)
	}
	return out
}

// GenerationRequest is the body of POST /generations, minus wait_seconds.
type GenerationRequest struct {
	Modality           string   `json:"modality"`
	Track              string   `json:"track,omitempty"`
	ModelID            string   `json:"model_id"`
	Prompt             string   `json:"prompt"`
	Count              *int     `json:"count,omitempty"`
	AspectRatio        string   `json:"aspect_ratio,omitempty"`
	Resolution         string   `json:"resolution,omitempty"`
	Duration           *int     `json:"duration,omitempty"`
	GenerateAudio      *bool    `json:"generate_audio,omitempty"`
	Voice              string   `json:"voice,omitempty"`
	Language           string   `json:"language,omitempty"`
	ReferenceAssetIDs  []uint64 `json:"reference_asset_ids,omitempty"`
	ReferenceImageURLs []string `json:"reference_image_urls,omitempty"`
}

// resolved is a generation request checked against its model, with the
// model's defaults filled in.
type resolved struct {
	model      *fixtures.Model
	count      int
	aspect     string
	resolution string
	duration   int
	audio      bool
	voice      string
	language   string
	prompt     string
}

// checkGeneration checks a request against the catalog; every violation is
// reported at once.
// MaxPrompt is the longest prompt, in characters.
const MaxPrompt = 5000

func (e *Engine) checkGeneration(req GenerationRequest) (resolved, Violations) {
	var v Violations
	r := resolved{count: 1, prompt: req.Prompt}
	// The rules of openapi.json hold here too, for callers that skip the
	// HTTP edge (the Go API, the MCP front).
	switch n := utf8.RuneCountInString(req.Prompt); {
	case strings.TrimSpace(req.Prompt) == "":
		v.Add("prompt", "is required")
	case n > MaxPrompt:
		v.Add("prompt", "at most %d characters, got %d", MaxPrompt, n)
	}
	track := req.Track
	tracks := modalityTracks(req.Modality)
	if len(tracks) > 0 && track == "" {
		track = tracks[0]
	}
	if len(tracks) == 0 && req.Track != "" {
		v.Add("track", "track applies to the %s modality only", trackedModalities)
	}
	m := e.models[req.ModelID]
	if m == nil {
		v.AddAllowed("model_id", anySlice(e.modelIDs(req.Modality, track)), "unknown model %q for modality %s", req.ModelID, modalityLabel(req.Modality, track))
		return r, v
	}
	r.model = m
	if m.Modality != req.Modality {
		v.AddAllowed("modality", []any{m.Modality}, "model %s is %s %s model, not %s", m.ID, article(m.Modality), m.Modality, req.Modality)
		return r, v
	}
	if len(tracks) > 0 && m.Track != track {
		v.AddAllowed("track", []any{m.Track}, "model %s makes %s, not %s", m.ID, m.Track, track)
		return r, v
	}
	mod, _ := fixtures.ModalityOf(m.Modality)
	o, d := m.Options, m.Defaults
	notFor := func(field, what string) {
		v.Add(field, "%s does not apply to %s models", what, modalityLabel(m.Modality, m.Track))
	}

	if req.Count != nil {
		if mod.MaxCount == 0 {
			notFor("count", "count")
		} else if *req.Count < 1 {
			v.AddAllowed("count", anySlice(seq(1, o.MaxCount)), "must be at least 1, got %d", *req.Count)
		} else if *req.Count > o.MaxCount {
			v.AddAllowed("count", anySlice(seq(1, o.MaxCount)), "model %s makes at most %d images per request", m.ID, o.MaxCount)
		} else {
			r.count = *req.Count
		}
	}
	r.aspect = option(&v, "aspect_ratio", req.AspectRatio, o.AspectRatios, d.AspectRatio, m, notFor)
	r.resolution = option(&v, "resolution", req.Resolution, o.Resolutions, d.Resolution, m, notFor)
	if req.Duration != nil {
		if len(o.Durations) == 0 {
			notFor("duration", "duration")
		} else if !slices.Contains(o.Durations, *req.Duration) {
			v.AddAllowed("duration", anySlice(o.Durations), "model %s does not offer a duration of %d seconds", m.ID, *req.Duration)
		} else {
			r.duration = *req.Duration
		}
	} else {
		r.duration = d.Duration
	}
	if req.GenerateAudio != nil {
		switch {
		case !mod.NativeAudio:
			notFor("generate_audio", "generate_audio")
		case *req.GenerateAudio && !o.NativeAudio:
			v.AddAllowed("generate_audio", []any{false}, "model %s cannot generate native audio", m.ID)
		default:
			r.audio = *req.GenerateAudio
		}
	} else {
		r.audio = o.NativeAudio
	}
	voices := make([]string, len(o.Voices))
	for i, x := range o.Voices {
		voices[i] = x.ID
	}
	r.voice = option(&v, "voice", req.Voice, voices, d.Voice, m, notFor)
	r.language = option(&v, "language", req.Language, o.Languages, d.Language, m, notFor)
	if req.Voice != "" && req.Language != "" && r.voice == req.Voice && r.language == req.Language {
		i := slices.IndexFunc(o.Voices, func(x fixtures.Voice) bool { return x.ID == r.voice })
		if langs := o.Voices[i].Languages; len(langs) > 0 && !slices.Contains(langs, r.language) {
			v.AddAllowed("language", anySlice(langs), "voice %s does not speak %s", r.voice, r.language)
		}
	}
	refs := len(req.ReferenceAssetIDs) + len(req.ReferenceImageURLs)
	switch {
	case m.MaxReferenceImages == 0 && refs > 0:
		v.Add(refField(req), "model %s takes no reference images", m.ID)
	case refs > m.MaxReferenceImages:
		v.Add(refField(req), "model %s takes at most %d reference images in all (ids and URLs together), got %d", m.ID, m.MaxReferenceImages, refs)
	case m.RequiresReferenceImage && refs == 0:
		v.Add("reference_asset_ids", "model %s requires a reference image: send reference_asset_ids or reference_image_urls", m.ID)
	}
	return r, v
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func refField(req GenerationRequest) string {
	if len(req.ReferenceAssetIDs) > 0 {
		return "reference_asset_ids"
	}
	return "reference_image_urls"
}

// option checks one optional string option against the model's list.
func option(v *Violations, field, got string, allowed []string, def string, m *fixtures.Model, notFor func(string, string)) string {
	if got == "" {
		return def
	}
	if len(allowed) == 0 {
		notFor(field, field)
		return def
	}
	if !slices.Contains(allowed, got) {
		v.AddAllowed(field, anySlice(allowed), "model %s does not offer %s %q", m.ID, strings.ReplaceAll(field, "_", " "), got)
		return def
	}
	return got
}

func (e *Engine) modelIDs(modality, track string) []string {
	var ids []string
	tracked := len(modalityTracks(modality)) > 0
	for _, m := range e.world.Models {
		if m.Modality == modality && (!tracked || m.Track == track) {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// modalityTracks lists the tracks of a modality, the default first; none
// for a modality without tracks or unknown.
func modalityTracks(modality string) []string {
	mod, _ := fixtures.ModalityOf(modality)
	return mod.Tracks()
}

// trackedModalities names the modalities that have tracks, for messages.
var trackedModalities = func() string {
	var names []string
	for _, m := range fixtures.Modalities {
		if len(m.Tracks()) > 0 {
			names = append(names, m.Name)
		}
	}
	return strings.Join(names, ", ")
}()

func modalityLabel(modality, track string) string {
	if len(modalityTracks(modality)) > 0 && track != "" {
		return modality + " (" + track + ")"
	}
	return modality
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from+1)
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// fill sets what an output of the request is: kind, media type, and the
// size and length the rules of its kind give.
func (r resolved) fill(a *Asset, index int) {
	m := r.model
	k := r.kind()
	a.Kind = k.Name
	a.MimeType = m.OutputMimeType
	a.Media = &Media{AspectRatio: r.aspect, Resolution: r.resolution, Voice: r.voice, Language: r.language, Audio: r.audio, Index: index}
	a.Width, a.Height = k.Pixels.Size(r.aspect, r.resolution)
	a.DurationSeconds = k.Length.Seconds(r.duration, r.prompt)
}

// kind is the asset kind the request's model makes.
func (r resolved) kind() fixtures.AssetKind {
	k, _ := fixtures.KindOf(*r.model)
	return k
}

// ImageSize is the pixel size of an image of aspect ratio W:H whose longer
// side is given by the resolution (1k = 1024 px): fixtures.ImageSize.
func ImageSize(aspect, resolution string) (int, int) { return fixtures.ImageSize(aspect, resolution) }

// VideoSize is the pixel size of a video of aspect ratio W:H whose shorter
// side is given by the resolution (720p = 720 px), rounded to even numbers:
// fixtures.VideoSize.
func VideoSize(aspect, resolution string) (int, int) { return fixtures.VideoSize(aspect, resolution) }

// MaxSpeechSeconds is the longest voice-over the service makes.
const MaxSpeechSeconds = fixtures.MaxSpeechSeconds

// SpeechSeconds is how long speaking text takes at 150 words a minute, at
// most ten minutes: fixtures.SpeechSeconds.
func SpeechSeconds(text string) int { return fixtures.SpeechSeconds(text) }

// durations draws a job's queue and processing times from its timing
// profile (fixed durations jittered, or distributions), its size and its
// own random generator, divided by the speed. The queue is drawn first.
func (e *Engine) durations(t fixtures.Timing, rng *seed.RNG, outputs, seconds, chars int) (time.Duration, time.Duration) {
	scale := func(x float64) time.Duration {
		return time.Duration(x / e.speed * float64(time.Second)).Round(time.Millisecond)
	}
	q := scale(t.DrawQueued(rng))
	p := scale(t.DrawProcessing(rng, outputs, seconds, chars))
	return q, max(p, time.Millisecond)
}

// describe names a request's outputs for messages.
func describe(m *fixtures.Model, count int) string {
	if count == 1 {
		return "1 output of " + m.ID
	}
	return fmt.Sprintf("%d outputs of %s", count, m.ID)
}
