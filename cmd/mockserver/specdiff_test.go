package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/specdiff"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/spec"
)

// save GETs a control URL of the mock into a file, as a user saves it with curl.
func save(t *testing.T, url, file string) {
	t.Helper()
	client := &http.Client{Timeout: testkit.Bound, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	res, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", url, res.StatusCode, err, body)
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runSpecDiff(t *testing.T, env fakeEnv, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = Run(context.Background(), append([]string{"spec-diff"}, args...), env.get, nil, &out, &errs)
	return code, out.String(), errs.String()
}

// TestRunSpecDiff records a client that only reads its account, saves the
// journal and the coverage as a user would, and diffs openapi.json with a
// changed copy: every change is listed, the one the client used first.
func TestRunSpecDiff(t *testing.T) {
	mock := mediamock.RunT(t)
	for range 2 {
		if code := get(t, mock.BaseURL()+"/account", nil); code != http.StatusOK {
			t.Fatalf("GET /account: %d", code)
		}
	}
	dir := t.TempDir()
	theirs, journalFile, coverageFile := filepath.Join(dir, "theirs.json"), filepath.Join(dir, "journal.json"), filepath.Join(dir, "coverage.json")
	if err := os.WriteFile(theirs, testkit.ChangedOpenAPI(t), 0o644); err != nil {
		t.Fatal(err)
	}
	save(t, mock.URL()+"/_mock/journal?limit=100000", journalFile)
	save(t, mock.URL()+"/_mock/coverage", coverageFile)

	for _, traffic := range [][]string{{"--journal", journalFile}, {"--coverage", coverageFile}, {"--journal", journalFile, "--coverage", coverageFile}} {
		t.Run(strings.Join(traffic, " "), func(t *testing.T) {
			code, out, errs := runSpecDiff(t, nil, append([]string{"--against", theirs}, traffic...)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			for _, id := range []string{"response-required-property-removed", "request-parameter-enum-value-removed", "request-property-enum-value-removed", "new-required-request-parameter"} {
				if !strings.Contains(out, id) {
					t.Errorf("no %s in:\n%s", id, out)
				}
			}
			if !regexp.MustCompile(`^1\s+breaking\s+yes( 2/2)?\s+2\s+GET /account \(getAccount\)\s+response-required-property-removed\s`).MatchString(lines[2]) {
				t.Errorf("the used change is not first:\n%s", out)
			}
			for _, l := range lines[3:] {
				if regexp.MustCompile(`^\d+\s+\w+\s+yes`).MatchString(l) {
					t.Errorf("only one change is used:\n%s", out)
				}
			}
		})
	}

	t.Run("json, fail on used-breaking", func(t *testing.T) {
		code, out, errs := runSpecDiff(t, nil, "--against", theirs, "--journal", journalFile, "--format", "json", "--fail-on", "used-breaking")
		if code != 1 || !strings.Contains(errs, "1 breaking change the traffic used") {
			t.Fatalf("exit %d, want 1: %s", code, errs)
		}
		var r specdiff.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if r.Summary.UsedBreaking != 1 || r.Changes[0].ID != "response-required-property-removed" || !r.Changes[0].Use.Used || r.Changes[0].Use.Hits != 2 {
			t.Fatalf("%+v", r.Changes[0])
		}
	})

	t.Run("without traffic: by severity, and used-breaking passes", func(t *testing.T) {
		code, out, errs := runSpecDiff(t, nil, "--against", theirs, "--fail-on", "used-breaking")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var sev []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[2:] {
			sev = append(sev, strings.Fields(l)[1])
		}
		if !slices.IsSortedFunc(sev, func(a, b string) int { return strings.Compare(a, b) }) || sev[0] != "breaking" {
			t.Fatalf("not by severity (breaking, then info): %q\n%s", sev, out)
		}
		if code, _, _ := runSpecDiff(t, nil, "--against", theirs, "--fail-on", "breaking"); code != 1 {
			t.Fatalf("--fail-on breaking: exit %d, want 1", code)
		}
	})
}

func TestRunSpecDiffAgainstURL(t *testing.T) {
	changed := testkit.ChangedOpenAPI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same.json":
			w.Write(spec.OpenAPI)
		case "/changed.json":
			w.Write(changed)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	code, out, errs := runSpecDiff(t, fakeEnv{"MOCKSERVER_SPECDIFF_AGAINST": srv.URL + "/same.json", "MOCKSERVER_SPECDIFF_FAIL_ON": "breaking"})
	if code != 0 || !strings.Contains(out, ": 0 changes (0 breaking, 0 warning, 0 info)") {
		t.Fatalf("the same document: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runSpecDiff(t, nil, "--against", srv.URL+"/changed.json"); code != 0 || !strings.Contains(out, "new-required-request-parameter") {
		t.Fatalf("a changed document: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runSpecDiff(t, nil, "--against", srv.URL+"/gone.json"); code != 2 || !strings.Contains(errs, "404 Not Found") {
		t.Fatalf("a missing URL: exit %d, %s", code, errs)
	}
}

func TestRunSpecDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notOpenAPI := write("not.json", `{"hello":"world"}`)
	garbage := write("garbage.txt", "hello: [")
	same := write("same.json", string(spec.OpenAPI))
	cases := []struct {
		name string
		env  fakeEnv
		args []string
		want string
	}{
		{"no --against", nil, nil, "--against (or MOCKSERVER_SPECDIFF_AGAINST) is required"},
		{"a missing file", nil, []string{"--against", filepath.Join(dir, "nope.json")}, "no such file"},
		{"not OpenAPI", nil, []string{"--against", notOpenAPI}, "is not an OpenAPI 3 document"},
		{"neither JSON nor YAML", nil, []string{"--against", garbage}, "is not an OpenAPI document (JSON or YAML)"},
		{"a bad format", nil, []string{"--against", same, "--format", "xml"}, "--format must be text or json"},
		{"a bad fail-on from the environment", fakeEnv{"MOCKSERVER_SPECDIFF_FAIL_ON": "warn"}, []string{"--against", same}, "MOCKSERVER_SPECDIFF_FAIL_ON must be breaking or used-breaking"},
		{"an unknown flag", nil, []string{"--against", same, "--bogus"}, "flag provided but not defined"},
		{"a missing journal", nil, []string{"--against", same, "--journal", filepath.Join(dir, "missing.json")}, "--journal"},
		{"a journal that is an error", nil, []string{"--against", same, "--journal", write("err.json", `{"error":{"code":"validation_failed","message":"limit must be at least 1"}}`)}, "not a journal but an error answer"},
		{"a coverage that is a journal", nil, []string{"--against", same, "--coverage", write("j.json", `{"entries":[]}`)}, "not a coverage report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runSpecDiff(t, tc.env, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) || out != "" {
				t.Fatalf("exit %d, want 2 and %q; stdout %q, stderr %q", code, tc.want, out, errs)
			}
		})
	}
	if code, out, _ := runSpecDiff(t, nil, "--help"); code != 0 || !strings.Contains(out, "-against") {
		t.Fatalf("--help: exit %d\n%s", code, out)
	}
}
