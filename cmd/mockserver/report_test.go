package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestRunReport: the report command asks a running server once, prints
// the form asked for, and exits 1 when a finding matches --fail-on, 0
// when none does, 2 on a bad command line.
func TestRunReport(t *testing.T) {
	srv := mediamock.RunT(t)
	for range 2 {
		status, _, _ := testkit.REST(t, srv, mediamock.KeyReadOnly, "GET", "/generations/999999", nil)
		if status != http.StatusNotFound {
			t.Fatalf("status %d", status)
		}
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"report", "--url", srv.URL()}, args...), fakeEnv{}.get, nil, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errs := run("--fail-on", "poll-unknown-id")
	if code != 1 || !strings.Contains(out, "WARNING poll-unknown-id (2)") || !strings.Contains(errs, "matches --fail-on poll-unknown-id") {
		t.Errorf("--fail-on poll-unknown-id: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = run("--fail-on", "error"); code != 0 {
		t.Errorf("--fail-on error: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run("--format", "json")
	var r struct {
		Findings []struct{ ID string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || len(r.Findings) != 1 || r.Findings[0].ID != "poll-unknown-id" {
		t.Errorf("--format json: exit %d, %v: %s", code, err, out)
	}
	file := filepath.Join(t.TempDir(), "client.xml")
	code, out, _ = run("--format", "junit", "--output", file, "--fail-on", "warning")
	xml, err := os.ReadFile(file)
	if code != 1 || err != nil || !bytes.Contains(xml, []byte(`<testcase classname="mediamock.client" name="poll-unknown-id"`)) ||
		!strings.Contains(out, "written to "+file) {
		t.Errorf("--format junit --output: exit %d, %v: %s\n%s", code, err, out, xml)
	}

	harFile := filepath.Join(t.TempDir(), "run.har")
	code, out, errs = run("--har", harFile)
	var archive struct {
		Log struct {
			Version string `json:"version"`
			Entries []struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
				Findings []string `json:"_findings"`
			} `json:"entries"`
		} `json:"log"`
	}
	data, err := os.ReadFile(harFile)
	if code != 0 || err != nil || json.Unmarshal(data, &archive) != nil || archive.Log.Version != "1.2" || len(archive.Log.Entries) != 2 ||
		archive.Log.Entries[0].Request.URL != srv.BaseURL()+"/generations/999999" || len(archive.Log.Entries[1].Findings) != 1 ||
		!strings.Contains(out, "written to "+harFile) {
		t.Errorf("--har: exit %d, %v: %s%s\n%.600s", code, err, out, errs, data)
	}

	for _, bad := range [][]string{{"--format", "yaml"}, {"--fail-on", "slowness"}, {"extra"}} {
		if code, _, errs := run(bad...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, want 2 with a message", bad, code)
		}
	}
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"report", "--url", "http://127.0.0.1:1"}, fakeEnv{}.get, nil, &bytes.Buffer{}, &stderr); code != 2 {
		t.Errorf("no server: exit %d (%s)", code, stderr.String())
	}
}
