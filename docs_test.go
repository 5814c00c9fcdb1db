package mediamock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documentation's pages: the README, the guides beside it, every page
// of docs/, the examples' README and llms.txt. Their links, anchors and
// code blocks are checked here and in docs_examples_test.go.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "CHANGELOG.md", "examples/README.md", "llms.txt"}
	require.NoError(t, filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, filepath.ToSlash(path))
		}
		return err
	}))
	return files
}

// docPages are the pages under docs/.
func docPages(t *testing.T) []string {
	var pages []string
	for _, f := range docFiles(t) {
		if strings.HasPrefix(f, "docs/") {
			pages = append(pages, f)
		}
	}
	return pages
}

var (
	fenceRE    = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*([^\\s`]*)")
	headingRE  = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkRE     = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	slugDrop   = regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc}\- ]`)
	htmlTagRE  = regexp.MustCompile(`<[^>]+>`)
)

// proseLines returns the lines of a markdown file outside fenced code
// blocks, with their numbers (1-based); lines inside a fence are "".
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			if fence == "" {
				fence = m[1]
				lines[i] = ""
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(line), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), fence[:1])) == "" {
				fence = ""
				lines[i] = ""
				continue
			}
		}
		if fence != "" {
			lines[i] = ""
		}
	}
	return lines
}

// slug is GitHub's anchor of a heading: its text as rendered (links as
// their text, no markup), lower case, without punctuation but - and _,
// spaces as dashes.
func slug(heading string) string {
	text := linkRE.ReplaceAllString(heading, "$1")
	text = htmlTagRE.ReplaceAllString(text, "")
	text = strings.ToLower(strings.TrimSpace(text))
	text = slugDrop.ReplaceAllString(text, "")
	return strings.ReplaceAll(text, " ", "-")
}

// anchors returns the anchors of a markdown file's headings, the second
// and later of a name numbered -1, -2, ... as GitHub does.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestSlug: the anchors are GitHub's.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Quick start":                          "quick-start",
		"Rehearse the service's next release":  "rehearse-the-services-next-release",
		"Events: `GET /_mock/events`":          "events-get-_mockevents",
		"Rate limits: which requests count":    "rate-limits-which-requests-count",
		"A CI job, no registry needed":         "a-ci-job-no-registry-needed",
		"The [proxy](proxy.md) and D-1":        "the-proxy-and-d-1",
		"Décisions":                            "décisions",
		"`--tls` (TLS_CERT)":                   "--tls-tls_cert",
		"Where the README's sections went":     "where-the-readmes-sections-went",
		"Decisions where the specification is": "decisions-where-the-specification-is",
	} {
		assert.Equal(t, want, slug(heading), heading)
	}
	assert.Equal(t, map[string]bool{"a": true, "a-1": true, "a-2": true, "b": true},
		anchors("# A\n## A\n```sh\n# A\n```\n### A\n## B\n"))
}

type docLink struct {
	file, target string
	line         int
}

// links returns the relative links of a markdown file outside code.
func links(file, text string) []docLink {
	var out []docLink
	for i, line := range proseLines(text) {
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			target := m[2]
			if target == "" || regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target) {
				continue
			}
			out = append(out, docLink{file: file, target: target, line: i + 1})
		}
	}
	return out
}

// resolve checks one relative link: the file or folder it names exists,
// and its #anchor is a heading of the markdown file it names. It returns
// the file the link leads to ("" for a folder) or an error.
func resolve(l docLink) (string, error) {
	path, frag, _ := strings.Cut(l.target, "#")
	dest := l.file
	if path != "" {
		dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(l.file), path)))
	}
	info, err := os.Stat(dest)
	if err != nil {
		return "", fmt.Errorf("%s:%d: %s: no such file", l.file, l.line, l.target)
	}
	if info.IsDir() {
		if frag != "" {
			return "", fmt.Errorf("%s:%d: %s: an anchor into a folder", l.file, l.line, l.target)
		}
		return "", nil
	}
	if frag != "" {
		if !strings.HasSuffix(dest, ".md") {
			return "", fmt.Errorf("%s:%d: %s: an anchor into a file that is not markdown", l.file, l.line, l.target)
		}
		data, err := os.ReadFile(dest)
		if err != nil {
			return "", err
		}
		if !anchors(string(data))[frag] {
			return "", fmt.Errorf("%s:%d: %s: %s has no heading #%s", l.file, l.line, l.target, dest, frag)
		}
	}
	return dest, nil
}

// TestDocsLinks: every relative link of the documentation leads to a file
// or folder of the repository, and every #anchor to a heading of it.
func TestDocsLinks(t *testing.T) {
	checked := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, l := range links(file, string(data)) {
			checked++
			if _, err := resolve(l); err != nil {
				t.Error(err)
			}
		}
	}
	assert.Greater(t, checked, 200, "the links were found")

	// The checker itself: a missing file, a missing anchor and a good
	// link in the same file.
	_, err := resolve(docLink{file: "docs/README.md", target: "how-to/nothing.md"})
	assert.Error(t, err)
	_, err = resolve(docLink{file: "docs/README.md", target: "how-to/tls.md#no-such-heading"})
	assert.Error(t, err)
	_, err = resolve(docLink{file: "docs/README.md", target: "#mediamock-documentation"})
	assert.NoError(t, err)
	assert.Len(t, links("x.md", "[a](b.md) `[c](d.md)` [e](https://x) ![f](g.png)\n```\n[h](i.md)\n```\n"), 2)
}

// oldReadmeAnchors are the anchors of every section (## and ###) of the
// README before its sections moved to docs/, in their order then. Links
// to them exist in the wild; docs/moved.md says where each went.
var oldReadmeAnchors = []string{
	"quick-start", "install", "in-go-tests", "in-containers-and-ci", "https",
	"a-ci-job-no-registry-needed", "docker-compose", "from-python-or-typescript",
	"parallel-tests-on-one-server", "endpoints", "errors-and-statuses",
	"rate-limits-which-requests-count", "control-api", "rehearse-failures",
	"rehearse-the-services-next-release", "mcp-server", "client-configuration",
	"connect-an-agent-with-oauth", "tools", "resources", "what-counts-against-the-rate-limit",
	"journal-and-coverage", "dashboard", "events-get-_mockevents", "reads-across-workspaces",
	"checking-the-real-service", "the-rules", "the-validating-proxy", "the-conformance-suite",
	"spec-diff", "cost", "clock-modes", "magic-inputs", "fixtures", "files-behind-the-urls",
	"uploads-and-image-urls", "configuration", "security",
	"decisions-where-the-specification-is-silent", "performance", "contributing",
}

// TestDocsMoved: docs/moved.md maps every section of the old README, in
// its order, to a page and heading that exist.
func TestDocsMoved(t *testing.T) {
	data, err := os.ReadFile("docs/moved.md")
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| (.+?) \\| `#([^`]+)` \\| \\[[^\\]]*\\]\\(([^)]+)\\) \\|$")
	var old []string
	for _, line := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		old = append(old, m[2])
		assert.Equal(t, m[2], slug(strings.TrimPrefix(m[1], "↳ ")), "the old anchor of %q", m[1])
		_, frag, _ := strings.Cut(m[3], "#")
		assert.NotEmpty(t, frag, "%s: the target names its heading", m[2])
		dest, err := resolve(docLink{file: "docs/moved.md", target: m[3]})
		if assert.NoError(t, err) {
			assert.True(t, dest == "README.md" || dest == "CONTRIBUTING.md" || strings.HasPrefix(dest, "docs/"),
				"#%s moved to %s", m[2], dest)
		}
	}
	assert.Equal(t, oldReadmeAnchors, old)
}

// TestLlmsTxt: llms.txt has the format of llmstxt.org (a title, a
// summary, sections of "- [Page](url): what it is" entries), every entry
// leads to a file, and every page of docs/ is listed.
func TestLlmsTxt(t *testing.T) {
	data, err := os.ReadFile("llms.txt")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	require.True(t, strings.HasPrefix(lines[0], "# "), "a title")
	assert.Contains(t, lines[2], "> ", "a summary")
	entry := regexp.MustCompile(`^- \[([^\]]+)\]\(([^)]+)\): \S.*$`)
	listed := map[string]bool{}
	section := ""
	for i, line := range lines[1:] {
		switch {
		case strings.HasPrefix(line, "## "):
			section = line
		case strings.HasPrefix(line, "- "):
			m := entry.FindStringSubmatch(line)
			if !assert.NotNil(t, m, "llms.txt:%d: not an entry: %q", i+2, line) {
				continue
			}
			assert.NotEmpty(t, section, "llms.txt:%d: an entry outside a section", i+2)
			dest, err := resolve(docLink{file: "llms.txt", target: m[2], line: i + 2})
			if assert.NoError(t, err) {
				assert.False(t, listed[dest], "%s twice", dest)
				listed[dest] = true
			}
		}
	}
	for _, page := range docPages(t) {
		assert.True(t, listed[page], "llms.txt lists %s", page)
	}
}

// TestDocsTasks: the five things a newcomer comes for are at most two
// clicks from the README.
func TestDocsTasks(t *testing.T) {
	depth := map[string]int{"README.md": 0}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		file := queue[0]
		queue = queue[1:]
		if depth[file] == 2 || !strings.HasSuffix(file, ".md") {
			continue
		}
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, l := range links(file, string(data)) {
			dest, err := resolve(l)
			if err != nil || dest == "" {
				continue
			}
			if _, ok := depth[dest]; !ok {
				depth[dest] = depth[file] + 1
				queue = append(queue, dest)
			}
		}
	}
	for task, page := range map[string]string{
		"start it in CI":          "docs/how-to/containers-and-ci.md",
		"fail the next video":     "docs/how-to/rehearse-failures.md",
		"connect an agent":        "docs/tutorials/connect-an-agent.md",
		"run suites in parallel":  "docs/how-to/parallel-suites.md",
		"check the real service":  "docs/how-to/check-the-real-service.md",
		"the documentation index": "docs/README.md",
	} {
		d, ok := depth[page]
		assert.True(t, ok && d <= 2, "%s (%s) is %d clicks from the README", task, page, d)
	}
	assert.True(t, slices.Contains(docPages(t), "docs/moved.md"))
}
