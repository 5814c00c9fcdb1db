package fault

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/spec"
)

// known is the service the kinds' tests hold rules to: openapi.json.
var known = func() Service {
	c, err := contract.ParseEmbedded("openapi.json", spec.OpenAPI)
	if err != nil {
		panic(err)
	}
	return c
}()

// Latencies follow their distribution, and the same seed draws the same.
func TestLatencyDistributions(t *testing.T) {
	draw := func(spec Spec, seed uint64) []time.Duration {
		require.NoError(t, Validate(&spec, "body", known))
		s := NewSet(seed)
		_, err := s.Add(Global, spec)
		require.NoError(t, err)
		out := make([]time.Duration, 2000)
		for i := range out {
			h := s.Pick(7, Delay, Request{Class: API})
			require.NotNil(t, h)
			out[i] = h.Delay()
		}
		return out
	}
	lo, hi := int64(100), int64(300)
	uniform := draw(Spec{Kind: Latency, Distribution: "uniform", MinMS: &lo, MaxMS: &hi}, 1)
	for _, d := range uniform {
		assert.True(t, d >= 100*time.Millisecond && d <= 300*time.Millisecond, d)
	}
	median, sigma := int64(200), 0.5
	logn := draw(Spec{Kind: Latency, Distribution: "lognormal", MedianMS: &median, Sigma: &sigma}, 1)
	sorted := slices.Sorted(slices.Values(logn))
	mid := sorted[len(sorted)/2]
	assert.InDelta(t, 200, float64(mid.Milliseconds()), 20, "the median is median_ms")
	assert.Greater(t, sorted[len(sorted)*99/100], 400*time.Millisecond, "a long tail")
	assert.Equal(t, logn, draw(Spec{Kind: Latency, Distribution: "lognormal", MedianMS: &median, Sigma: &sigma}, 1), "same seed, same draws")
	assert.NotEqual(t, logn, draw(Spec{Kind: Latency, Distribution: "lognormal", MedianMS: &median, Sigma: &sigma}, 2))
	huge := int64(MaxLatencyMS)
	big := 4.0
	for _, d := range draw(Spec{Kind: Latency, Distribution: "lognormal", MedianMS: &huge, Sigma: &big}, 3) {
		assert.LessOrEqual(t, d, time.Duration(MaxLatencyMS)*time.Millisecond, "capped")
	}
}

// A probability strikes about that share of the requests; first spends
// the rule; a workspace's rules come before the global ones.
func TestPickStrikesAndScopes(t *testing.T) {
	s := NewSet(9)
	p := 0.25
	_, err := s.Add(Global, Spec{Kind: Reset, Probability: &p})
	require.NoError(t, err)
	hits := 0
	for range 4000 {
		if s.Pick(3, Deliver, Request{Class: API}) != nil {
			hits++
		}
	}
	assert.InDelta(t, 1000, hits, 120)
	own, err := s.Add(3, Spec{Kind: Truncate, First: 2})
	require.NoError(t, err)
	assert.Equal(t, Truncate, s.Pick(3, Deliver, Request{Class: API}).Kind)
	assert.Equal(t, own.ID, s.Pick(3, Deliver, Request{Class: API}).Rule)
	assert.NotEqual(t, Truncate, kindOf(s.Pick(3, Deliver, Request{Class: API})), "spent after first=2")
	assert.Len(t, s.Rules(3), 0)
	assert.Nil(t, s.Pick(3, Admit, Request{Class: API}), "a delivery fault is not an admission's")

	s.ClearAll()
	assert.False(t, s.Active())
	_, err = s.Add(Global, Spec{Kind: FileTruncate})
	require.NoError(t, err)
	assert.NotNil(t, s.Pick(0, Deliver, Request{Class: Files, Path: "/files/a"}))
	assert.Nil(t, s.Pick(0, Deliver, Request{Class: Files, Path: "/files/a"}), "a file's first download only")
	assert.Nil(t, s.Pick(0, Deliver, Request{Class: Files, Path: "/files/b", Ranged: true}), "a range is served")
	assert.Nil(t, s.Pick(0, Deliver, Request{Class: API}), "files only")
}

func kindOf(h *Hit) string {
	if h == nil {
		return ""
	}
	return h.Kind
}

func TestParseHeader(t *testing.T) {
	s, err := ParseHeader([]string{" latency ; distribution=uniform; min_ms=1;max_ms=5 "}, known)
	require.NoError(t, err)
	assert.Equal(t, Latency, s.Kind)
	assert.EqualValues(t, 5, *s.MaxMS)
	_, err = ParseHeader([]string{"reset", "truncate"}, known)
	assert.ErrorContains(t, err, "one fault per request")
	_, err = ParseHeader([]string{"reset; after_bytes=1; after_bytes=2"}, known)
	assert.ErrorContains(t, err, "twice")
	_, err = ParseHeader([]string{"slow_body; bytes_per_second=fast"}, known)
	assert.ErrorContains(t, err, "not an integer")
}

// The kinds of what clients meet in production: what each takes and
// refuses, and how the simulation asks them (a workspace's rule first,
// spent after first, and the targets each names).
func TestProductionKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		bad  string // the field refused; "" when valid
	}{
		{"moderation at creation", Spec{Kind: Moderation}, ""},
		{"moderation while processing, of Encore", Spec{Kind: Moderation, At: "processing", Modality: "encore", Model: "m"}, ""},
		{"moderation elsewhere", Spec{Kind: Moderation, At: "queued"}, "at"},
		{"moderation has no code", Spec{Kind: Moderation, Code: "x"}, "code"},
		{"outputs", Spec{Kind: OutputFailure, Outputs: 3, Modality: "image", First: 1}, ""},
		{"too many outputs", Spec{Kind: OutputFailure, Outputs: 4}, "outputs"},
		{"outputs of no Encore", Spec{Kind: OutputFailure, Modality: "encore"}, "modality"},
		{"an account", Spec{Kind: AccountDisconnected, SocialAccountID: 12}, ""},
		{"a platform's accounts", Spec{Kind: AccountDisconnected, Platform: "tiktok", First: 1}, ""},
		{"no account", Spec{Kind: AccountDisconnected}, "social_account_id"},
		{"every platform", Spec{Kind: AccountDisconnected, Platform: "all"}, "platform"},
		{"not by modality", Spec{Kind: AccountDisconnected, Platform: "x", Modality: "image"}, "modality"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(&tc.spec, "body", known)
			if tc.bad == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var fields []string
			for _, v := range problem.AsError(err).Details["violations"].([]problem.Violation) {
				fields = append(fields, v.Field)
			}
			assert.Contains(t, fields, tc.bad)
		})
	}

	s := NewSet(1)
	_, err := s.Add(Global, Spec{Kind: Moderation})
	require.NoError(t, err)
	_, err = s.Add(7, Spec{Kind: Moderation, At: "processing", Modality: "video", First: 1})
	require.NoError(t, err)
	assert.Equal(t, "processing", s.Moderated(7, "video", "veo"), "the workspace's rule first")
	assert.Equal(t, "creation", s.Moderated(7, "video", "veo"), "spent: the global one")
	assert.Equal(t, "creation", s.Moderated(8, "image", "imagen-4"))
	s.ClearAll()
	assert.Empty(t, s.Moderated(7, "image", "imagen-4"))

	_, err = s.Add(Global, Spec{Kind: OutputFailure, Outputs: 3, Model: "imagen-4"})
	require.NoError(t, err)
	assert.Equal(t, 0, s.FailedOutputs(7, "image", "imagen-4", 1), "one output is never partial")
	assert.Equal(t, 1, s.FailedOutputs(7, "image", "imagen-4", 2), "all but one at most")
	assert.Equal(t, 3, s.FailedOutputs(7, "image", "imagen-4", 4))
	assert.Equal(t, 0, s.FailedOutputs(7, "image", "seedream-4", 4), "another model")

	_, err = s.Add(7, Spec{Kind: AccountDisconnected, SocialAccountID: 12})
	require.NoError(t, err)
	_, err = s.Add(Global, Spec{Kind: AccountDisconnected, Platform: "tiktok", SocialAccountID: 30})
	require.NoError(t, err)
	assert.True(t, s.AccountDisconnected(7, 12, "instagram"))
	assert.False(t, s.AccountDisconnected(8, 12, "instagram"), "workspace 7's rule")
	assert.False(t, s.AccountDisconnected(8, 31, "tiktok"), "both given: that account on that platform")
	assert.True(t, s.AccountDisconnected(8, 30, "tiktok"))
}
