package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/conformance"
)

var testKeys = []string{mediamock.KeyReadOnly, mediamock.KeyGenerateOnly, mediamock.KeyPublishOnly, mediamock.KeyAllScopes}

// buildMockserver builds the command as a user gets it: one binary.
func buildMockserver(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the mockserver binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "mockserver")
	if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/mediamock/mediamock/cmd/mockserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBinary runs the binary with only the environment given and returns its
// exit code and output.
func runBinary(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	return code, out.String(), errOut.String()
}

// readReports reads the JSON and JUnit XML reports a run wrote and holds
// them to each other.
func readReports(t *testing.T, jsonPath, junitPath string) (*conformance.Report, *conformance.JUnitSuites) {
	t.Helper()
	var rep conformance.Report
	var junit conformance.JUnitSuites
	for path, v := range map[string]any{jsonPath: &rep, junitPath: &junit} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the report was not written: %v", err)
		}
		for _, k := range testKeys {
			if strings.Contains(string(b), k) {
				t.Errorf("%s holds the key %s", filepath.Base(path), k)
			}
		}
		if strings.HasSuffix(path, ".xml") {
			err = xml.Unmarshal(b, v)
		} else {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatalf("read %s: %v", filepath.Base(path), err)
		}
	}
	if len(rep.Outcomes) == 0 || junit.Tests != len(rep.Outcomes) || junit.Failures != rep.Totals.Failed || junit.Errors != 0 {
		t.Errorf("JUnit says %d tests, %d failures, %d errors; the JSON report %d outcomes, %d failed",
			junit.Tests, junit.Failures, junit.Errors, len(rep.Outcomes), rep.Totals.Failed)
	}
	skipped, cases := 0, 0
	for _, s := range junit.Suites {
		skipped += s.Skipped
		cases += len(s.Cases)
	}
	if skipped != rep.Totals.Skipped || cases != len(rep.Outcomes) {
		t.Errorf("JUnit has %d cases, %d skipped; the JSON report %d outcomes, %d skipped", cases, skipped, len(rep.Outcomes), rep.Totals.Skipped)
	}
	return &rep, &junit
}

// TestConformanceFromTheBinary runs the suite as CI does, with the built
// binary alone: against this mock it passes and says so with exit 0;
// against a server that breaks a rule it exits 1 and the JUnit report
// names the failure.
func TestConformanceFromTheBinary(t *testing.T) {
	bin := buildMockserver(t)
	srv := mediamock.RunT(t)
	// Keys from the environment, as CI gives them; one by the Go test's name.
	env := []string{
		"MOCKSERVER_CONFORMANCE_KEY_READ=" + mediamock.KeyReadOnly,
		"MOCKSERVER_CONFORMANCE_KEY_GENERATE=" + mediamock.KeyGenerateOnly,
		"MOCKSERVER_CONFORMANCE_KEY_PUBLISH=" + mediamock.KeyPublishOnly,
		"MEDIAMOCK_KEY_ALL=" + mediamock.KeyAllScopes,
		"MOCKSERVER_CONFORMANCE_SPEND_CREDITS=true",
	}

	t.Run("a conforming server", func(t *testing.T) {
		dir := t.TempDir()
		code, stdout, stderr := runBinary(t, bin, env, "conformance", "--url", srv.BaseURL(),
			"--report", filepath.Join(dir, "conformance.json"), "--junit", filepath.Join(dir, "conformance.xml"))
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
		}
		rep, _ := readReports(t, filepath.Join(dir, "conformance.json"), filepath.Join(dir, "conformance.xml"))
		if rep.Totals.Failed != 0 || rep.URL != srv.BaseURL() {
			t.Errorf("report of %s: %+v", rep.URL, rep.Totals)
		}
		for _, o := range rep.Outcomes {
			if o.Rule == "generation.lifecycle" && o.Status != conformance.StatusPassed {
				t.Errorf("generation.lifecycle %s: --spend-credits from the environment was not read: %s", o.Status, o.Detail)
			}
			if o.Rule == "credits.balance" && o.Status != conformance.StatusPassed {
				t.Errorf("credits.balance %s: MEDIAMOCK_KEY_ALL was not read: %s", o.Status, o.Detail)
			}
		}
		for _, want := range []string{"rule ", "openapi.body", "passed", "0 failed"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		for _, k := range testKeys {
			if strings.Contains(stdout+stderr, k) {
				t.Errorf("the output shows the key %s", k)
			}
		}
	})

	t.Run("a server that breaks a rule", func(t *testing.T) {
		h := srv.Handler()
		broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/no-such-path") {
				io.WriteString(w, "served anyway")
				return
			}
			h.ServeHTTP(w, r)
		}))
		defer broken.Close()
		dir := t.TempDir()
		code, stdout, stderr := runBinary(t, bin, env, "conformance", "--url", broken.URL+"/api/v1",
			"--report", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"))
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "FAIL paths.unknown: GET /conformance/no-such-path: got 200, want [404]") {
			t.Errorf("stdout does not name the failure:\n%s", stdout)
		}
		_, junit := readReports(t, filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"))
		failed := map[string]string{}
		for _, s := range junit.Suites {
			for _, c := range s.Cases {
				if len(c.Failures) > 0 {
					failed[c.Name] = c.Failures[0].Text
				}
			}
		}
		if !strings.Contains(failed["paths.unknown"], "got 200") || failed["openapi.operation"] == "" {
			t.Errorf("the JUnit failures are %v, want paths.unknown and openapi.operation", failed)
		}
	})
}

// TestConformanceSettings: a flag wins over MOCKSERVER_CONFORMANCE_*, which
// wins over the Go test's MEDIAMOCK_* names.
func TestConformanceSettings(t *testing.T) {
	env := fakeEnv{
		"MOCKSERVER_CONFORMANCE_URL":      "http://ours/api/v1",
		"MEDIAMOCK_CONFORMANCE_URL":       "http://theirs/api/v1",
		"MOCKSERVER_CONFORMANCE_KEY_READ": "ours-read",
		"MEDIAMOCK_KEY_READ":              "theirs-read",
		"MEDIAMOCK_KEY_GENERATE":          "theirs-generate",
		"MEDIAMOCK_SPEND_CREDITS":         "1",
		"MOCKSERVER_CONFORMANCE_TIMEOUT":  "90s",
	}
	s, err := parseConformanceSettings([]string{"--key-read", "flag-read"}, env.get, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != "http://ours/api/v1" || s.Keys.Read != "flag-read" || s.Keys.Generate != "theirs-generate" || !s.Spend || s.Timeout.Seconds() != 90 {
		t.Errorf("settings %+v", s)
	}
	if s.name("key-generate") != "MEDIAMOCK_KEY_GENERATE" || s.name("key-read") != "--key-read" || s.name("junit") != "--junit" {
		t.Errorf("sources %v", s.source)
	}
}

func TestConformanceBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  fakeEnv
		code int
		want string
	}{
		{nil, nil, 2, "--url (or MOCKSERVER_CONFORMANCE_URL) is required"},
		{[]string{"--url", "ftp://example.com/api/v1"}, nil, 2, "is not a base URL"},
		{[]string{"--url", "https://example.com/v2"}, nil, 2, "is not a base URL"},
		{[]string{"--url", "https://example.com/api/v1", "extra"}, nil, 2, `unexpected argument "extra"`},
		{[]string{"--url", "https://example.com/api/v1", "--timeout", "0s"}, nil, 2, "--timeout must be above 0"},
		{[]string{"--url", "https://example.com/api/v1"}, fakeEnv{"MOCKSERVER_CONFORMANCE_TIMEOUT": "soon"}, 2, "invalid MOCKSERVER_CONFORMANCE_TIMEOUT"},
		{[]string{"--url", "https://example.com/api/v1"}, fakeEnv{"MEDIAMOCK_SPEND_CREDITS": "perhaps"}, 2, "invalid MEDIAMOCK_SPEND_CREDITS"},
		{[]string{"--nope"}, nil, 2, "flag provided but not defined: -nope"},
		{[]string{"--help"}, nil, 0, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(t.Context(), append([]string{"conformance"}, tc.args...), tc.env.get, nil, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want exit %d and %q", tc.args, tc.env, code, stderr.String(), tc.code, tc.want)
		}
		if tc.code == 0 && !strings.Contains(stdout.String(), "MOCKSERVER_CONFORMANCE_KEY_READ") {
			t.Errorf("--help does not name the variables:\n%s", stdout.String())
		}
	}
}

// TestConformanceReportNotWritten: a report that cannot be written fails
// the run, though every check passed.
func TestConformanceReportNotWritten(t *testing.T) {
	srv := mediamock.RunT(t)
	var stdout, stderr bytes.Buffer
	env := fakeEnv{"MOCKSERVER_CONFORMANCE_KEY_READ": mediamock.KeyReadOnly}
	code := Run(t.Context(), []string{"conformance", "--url", srv.BaseURL(), "--junit", filepath.Join(t.TempDir(), "no", "such", "dir.xml")}, env.get, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "write the report") || !strings.Contains(stdout.String(), " 0 failed") {
		t.Errorf("exit %d, want 1\n%s\n%s", code, stdout.String(), stderr.String())
	}
}
