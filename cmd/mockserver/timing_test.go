package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/proxy"
	"github.com/mediamock/mediamock/internal/testkit"
)

// timingWorld stands in for the real service: room for every job at once
// (no job waits for a slot, so what queues is the provider's queue), and
// flux-2-pro's times drawn from distributions, imagen-4's fixed and
// jittered as in the default.
const timingWorld = `{
  "extends": "default",
  "limits": {"studio_concurrency": 256},
  "plans": {"lab": {"rate_limit_per_minute": 100000, "publishing_allowed": false}},
  "workspaces": [{"name": "Timing Lab", "plan": "lab", "credits": 1000000,
    "api_keys": [{"token": "mk_test_timing_lab", "scopes": ["read", "generate"]}],
    "brand_kits": [], "projects": [], "characters": [], "social_accounts": [], "assets": []}],
  "timing": {
    "flux-2-pro": {"queued": {"lognormal": {"median": 3, "sigma": 0.3}}, "processing": {"uniform": {"min": 6, "max": 14}}}
  }
}
`

const timingKey = "mk_test_timing_lab"

// pollStep is how far the simulated clock moves between two polls.
const pollStep = 200 * time.Millisecond

// TestLearnedTimingReproducesTheRecording is issue 43's done-when: the
// proxy records a run of 200 jobs against a mock standing in for the real
// service; `mockserver fixtures timing` writes what it learned as the
// fixture's timing; a mock on that fixture, recorded the same way,
// reproduces the recorded medians within 10%; and two runs of it on the
// same seed answer byte for byte the same. All on the simulated clock.
func TestLearnedTimingReproducesTheRecording(t *testing.T) {
	dir := t.TempDir()
	world := filepath.Join(dir, "world.json")
	if err := os.WriteFile(world, []byte(timingWorld), 0o644); err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for i := range 200 {
		jobs = append(jobs, []string{"flux-2-pro", "imagen-4"}[i%2])
	}

	recorded := filepath.Join(dir, "recorded")
	runJobs(t, world, 1, recorded, jobs)
	learned := filepath.Join(dir, "learned.json")
	if err := os.WriteFile(learned, []byte(timingWorld), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"fixtures", "timing", "--recording", recorded, "--write", learned}, noEnv, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("fixtures timing: exit %d: %s", code, stderr.String())
	}
	t.Logf("learned:\n%s", stdout.String())
	if !strings.Contains(stdout.String(), "wrote the timing of 2 models (samples)") {
		t.Errorf("fixtures timing says:\n%s", stdout.String())
	}
	w, err := fixtures.Load(learned, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range w.Models {
		if (m.ID == "flux-2-pro" || m.ID == "imagen-4") && (m.Timing.Queued == nil || len(m.Timing.Queued.Samples) != 100 || len(m.Timing.Processing.Samples) != 100) {
			t.Errorf("%s: timing %+v, want 100 samples of each", m.ID, m.Timing)
		}
	}
	// The recording's own fixture takes the learned timing too.
	stdout.Reset()
	if code := Run(context.Background(), []string{"fixtures", "timing", "--recording", recorded, "--write", filepath.Join(recorded, proxy.FixtureFile), "--as", "lognormal"}, noEnv, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("fixtures timing into the recorded fixture: exit %d: %s", code, stderr.String())
	}

	first := runJobs(t, learned, 42, filepath.Join(dir, "replay1"), jobs)
	second := runJobs(t, learned, 42, filepath.Join(dir, "replay2"), jobs)
	if !bytes.Equal(first, second) {
		t.Errorf("the same seed answered differently: %d and %d bytes", len(first), len(second))
	}

	want := learnedByModel(t, recorded)
	got := learnedByModel(t, filepath.Join(dir, "replay1"))
	for _, model := range []string{"flux-2-pro", "imagen-4"} {
		r, g := want[model], got[model]
		t.Logf("%s: queued median %.3f s recorded, %.3f s replayed; processing median %.3f s recorded, %.3f s replayed",
			model, r.Queued.Median, g.Queued.Median, r.Processing.Median, g.Processing.Median)
		if g.Queued.Count != 100 || g.Processing.Count != 100 {
			t.Errorf("%s: %d and %d jobs measured, want 100", model, g.Queued.Count, g.Processing.Count)
		}
		for what, pair := range map[string][2]float64{"queued": {r.Queued.Median, g.Queued.Median}, "processing": {r.Processing.Median, g.Processing.Median}} {
			if rel := (pair[1] - pair[0]) / pair[0]; rel < -0.1 || rel > 0.1 {
				t.Errorf("%s %s: median %.3f s replayed, %.3f s recorded: %+.1f%%, want within 10%%", model, what, pair[1], pair[0], rel*100)
			}
		}
	}
}

func learnedByModel(t *testing.T, dir string) map[string]proxy.Learned {
	t.Helper()
	tm, err := proxy.ReadTimings(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]proxy.Learned{}
	for _, l := range tm.Learn() {
		out[l.Model] = l
	}
	return out
}

// runJobs starts a mock on the fixture and seed, with a recording proxy
// in front of it on the mock's clock, creates the jobs at once, polls the
// library every pollStep of simulated time until every job is done, and
// writes the recording to recordDir. It returns every answer's status and
// body, in order.
func runJobs(t *testing.T, fixture string, seed uint64, recordDir string, jobs []string) []byte {
	t.Helper()
	srv := mediamock.RunT(t, mediamock.WithFixtures(fixture), mediamock.WithSeed(seed), mediamock.WithClock(mediamock.ClockVirtual),
		func(o *mediamock.Options) { o.PublicURL = "http://mock.test" })
	p, err := proxy.New(proxy.Options{Upstream: srv.BaseURL(), Document: mediamock.OpenAPIDocument, RecordDir: recordDir, Now: srv.Now})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	base := front.URL + "/api/v1"
	client := &http.Client{Timeout: testkit.Bound}
	var transcript bytes.Buffer
	call := func(method, path string, body any, out any) {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, base+path, r)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+timingKey)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode >= 300 || resp.Header.Get(proxy.ViolationsHeader) != "" {
			t.Fatalf("%s %s: %d %s %s", method, path, resp.StatusCode, resp.Header.Get(proxy.ViolationsHeader), b)
		}
		fmt.Fprintf(&transcript, "%s %s %d %s\n", method, path, resp.StatusCode, bytes.TrimSpace(b))
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	call(http.MethodGet, "/account", nil, nil)
	for i, model := range jobs {
		call(http.MethodPost, "/generations", map[string]any{"modality": "image", "model_id": model, "prompt": fmt.Sprintf("a lighthouse at dawn, take %d", i)}, nil)
	}
	type page struct {
		Data []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
		HasMore    bool  `json:"has_more"`
		NextCursor int64 `json:"next_cursor"`
	}
	for step := 0; ; step++ {
		if step > 1000 {
			t.Fatalf("jobs still running after %v of simulated time", time.Duration(step)*pollStep)
		}
		if err := srv.Advance(pollStep); err != nil {
			t.Fatal(err)
		}
		running := 0
		for cursor := int64(0); ; {
			path := "/assets?limit=50"
			if cursor > 0 {
				path += fmt.Sprintf("&starting_after=%d", cursor)
			}
			var pg page
			call(http.MethodGet, path, nil, &pg)
			for _, a := range pg.Data {
				if a.Status != "completed" && a.Status != "failed" {
					running++
				}
			}
			if !pg.HasMore || len(pg.Data) == 0 {
				break
			}
			cursor = pg.Data[len(pg.Data)-1].ID
		}
		if running == 0 {
			break
		}
	}
	front.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return transcript.Bytes()
}

func TestFixturesTimingCommandLine(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, proxy.TimingFile)
	if err := os.WriteFile(rec, []byte(`{"format": "mediamock-timing/1", "jobs": [
  {"model": "seedream-4", "modality": "image", "outcome": "completed", "measured_by": "polls", "queued_seconds": 1.5, "processing_seconds": 4, "total_seconds": 5.5},
  {"model": "seedream-4", "modality": "image", "outcome": "completed", "measured_by": "polls", "queued_seconds": 0.5, "processing_seconds": 6, "total_seconds": 6.5},
  {"model": "not-in-the-catalog", "modality": "video", "outcome": "completed", "measured_by": "polls", "queued_seconds": 1, "processing_seconds": 30, "total_seconds": 31}
]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no command", []string{"fixtures"}, 2, "", "want a command: timing"},
		{"unknown command", []string{"fixtures", "speed"}, 2, "", `not "speed"`},
		{"no recording", []string{"fixtures", "timing"}, 2, "", "--recording is required"},
		{"bad form", []string{"fixtures", "timing", "--recording", dir, "--as", "normal"}, 2, "", "--as must be samples or lognormal"},
		{"missing recording", []string{"fixtures", "timing", "--recording", filepath.Join(dir, "none")}, 1, "", "no such file"},
		{"table", []string{"fixtures", "timing", "--recording", dir}, 0, "seedream-4          image     2     2       1.00s   1.40s  2           5.00s   5.80s", ""},
		{"new fixture", []string{"fixtures", "timing", "--recording", rec, "--write", filepath.Join(dir, "new.json")}, 0, "wrote the timing of 1 models (samples)", "left out: not-in-the-catalog: the fixture has no model or effect of that name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), tc.args, noEnv, nil, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
	got, err := os.ReadFile(filepath.Join(dir, "new.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "extends": "default",
  "timing": {
    "seedream-4": {"queued":{"samples":[1.5,0.5]},"processing":{"samples":[4,6]}}
  }
}
`
	if string(got) != want {
		t.Errorf("new.json:\n%s\nwant:\n%s", got, want)
	}
}
