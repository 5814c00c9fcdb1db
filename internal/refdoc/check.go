package refdoc

import (
	"bytes"
	"os"
	"strings"
)

// TB is the part of testing.TB that Check uses: refdoc does not import
// testing, since packages linked into the binaries (the contract, the
// command line) write their pages with it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

// Check holds the committed page at path (relative to the test's package)
// to got: a page that differs fails the test with the command that
// rewrites it; with update, the page is written instead.
//
// Only the fault kinds' page (internal/fault's test) still uses it, until
// its renderer is a plain function of internal/fault the generator calls:
// the generator's test (internal/gen) holds every other generated file.
func Check(t TB, path string, got []byte, update bool, command string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run %s to write it", err, command)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run %s (and review the diff)\n%s", trimDots(path), command, FirstDifference(want, got))
	}
}

// trimDots drops the leading ../ of a path relative to a package: the
// path from the repository's root, for a package two levels down.
func trimDots(path string) string {
	for strings.HasPrefix(path, "../") {
		path = path[3:]
	}
	return path
}
