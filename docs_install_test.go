package mediamock_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userFacing are the files a user reads or copies: the documentation, the
// examples (their comments and the CI workflows) and the packages'
// READMEs. The CHANGELOG is history and is left out.
func userFacing(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, f := range docFiles(t) {
		if f != "CHANGELOG.md" {
			files = append(files, f)
		}
	}
	for _, root := range []string{"examples", "packages"} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "dist" || d.Name() == "build") {
				return filepath.SkipDir
			}
			path = filepath.ToSlash(path)
			if !d.IsDir() && !slices.Contains(files, path) && (strings.HasSuffix(path, ".md") ||
				strings.HasPrefix(path, "examples/") && regexp.MustCompile(`\.(py|ts|yml|yaml|go)$`).MatchString(path)) {
				files = append(files, path)
			}
			return nil
		}))
	}
	return files
}

// registryInstall is an install from a registry nothing has been published
// to yet: npm, PyPI, the container registry, the Go module path.
var registryInstall = regexp.MustCompile(`npm (install|i|add)( --save-dev| -D)* @mediamock/server|` +
	`pip install( -q)?( pytest)? mediamock\b|ghcr\.io/mediamock/mediamock|go install github\.com/mediamock/mediamock`)

// notYet is what says that an install waits for a release.
var notYet = regexp.MustCompile(`(?i)once (a release|the \w+) is published|not (yet )?published|nothing is published|` +
	`is not yet|not yet:|not on (npm|pypi) yet|until (then|the package is published)|once published|after a release`)

// An install line never presents a registry as working today: every one
// says, in its paragraph, table or code block or the three lines before
// it, that it waits for a release (users copied `pip install mediamock`
// and got whatever owns that name).
func TestDocsSayWhichInstallsWorkToday(t *testing.T) {
	for _, f := range userFacing(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		for i, line := range lines {
			if !registryInstall.MatchString(line) {
				continue
			}
			start, end := i, i
			for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
				start--
			}
			for end < len(lines)-1 && strings.TrimSpace(lines[end+1]) != "" {
				end++
			}
			near := strings.Join(lines[max(0, start-3):end+1], "\n")
			assert.Regexp(t, notYet, near, "%s:%d presents a registry install without saying it waits for a release: %s", f, i+1, strings.TrimSpace(line))
		}
	}
}

// The variables the documentation tells users to set are the ones the
// code reads: a MEDIAMOCK_ name in a doc or an example must occur in the
// sources of the helpers, the server or the scripts (a suite that set
// MEDIAMOCK_BASE_URL, which nothing read, quietly started a server of its
// own).
func TestDocsNameOnlyVariablesTheCodeReads(t *testing.T) {
	name := regexp.MustCompile(`\bMEDIAMOCK_[A-Z0-9_]*[A-Z0-9]\b`)
	named := map[string]string{}
	for _, f := range userFacing(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, v := range name.FindAllString(string(data), -1) {
			if _, ok := named[v]; !ok {
				named[v] = f
			}
		}
	}
	require.NotEmpty(t, named)
	out, err := exec.Command("git", "ls-files", "--", "*.go", "*.ts", "*.py", "*.js", "*.mjs", "scripts/*", ".ci/*", "Dockerfile").Output()
	if err != nil {
		t.Skip("git ls-files is needed to list the sources:", err)
	}
	var sources strings.Builder
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "examples/") || strings.HasSuffix(f, "_test.go") && !strings.HasPrefix(f, "packages/") {
			continue // the examples and the Go tests name variables; the sources must read them
		}
		data, err := os.ReadFile(f)
		if err == nil {
			sources.Write(data)
		}
	}
	read := sources.String()
	for v, f := range named {
		switch {
		case strings.HasPrefix(v, "MEDIAMOCK_KEY_") && strings.Contains(read, `"MEDIAMOCK_KEY_"`):
			// the conformance suite reads MEDIAMOCK_KEY_<SCOPE>
		case strings.Contains(read, v):
		default:
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			// A workflow's own repository variable (${{ vars.NAME }}) is read by the workflow.
			assert.Contains(t, string(data), "vars."+v, "%s names %s, which no source reads", f, v)
		}
	}
}

// packages/python/pyproject.toml (pip install ./packages/python) carries
// the repository's version, in PEP 440's spelling (1.2.3-dev is 1.2.3.dev0,
// -rc.N is rcN), as the release's wheels do.
func TestPyprojectVersionFollowsVERSION(t *testing.T) {
	data, err := os.ReadFile("VERSION")
	require.NoError(t, err)
	m := regexp.MustCompile(`^(\d+\.\d+\.\d+)(?:-(dev|alpha\.(\d+)|beta\.(\d+)|rc\.(\d+)))?$`).FindStringSubmatch(strings.TrimSpace(string(data)))
	require.NotNil(t, m, "VERSION is X.Y.Z[-dev|-alpha.N|-beta.N|-rc.N]")
	want := m[1]
	switch {
	case m[2] == "dev":
		want += ".dev0"
	case m[3] != "":
		want += "a" + m[3]
	case m[4] != "":
		want += "b" + m[4]
	case m[5] != "":
		want += "rc" + m[5]
	}
	toml, err := os.ReadFile("packages/python/pyproject.toml")
	require.NoError(t, err)
	got := regexp.MustCompile(`(?m)^version = "([^"]+)"$`).FindSubmatch(toml)
	require.NotNil(t, got, "pyproject.toml has a version line")
	assert.Equal(t, want, string(got[1]), "pyproject.toml's version follows VERSION")
}
