package version

import "testing"

// A test binary is no tagged module: the version is "dev" until one is
// stamped, and the stamp from then on.
func TestStampedElseTheBuilds(t *testing.T) {
	t.Cleanup(func() { Set("") })
	if got := String(); got != "dev" {
		t.Fatalf("String() = %q before a stamp, want dev", got)
	}
	Set("1.2.3")
	if got := String(); got != "1.2.3" {
		t.Fatalf("String() = %q, want the stamp", got)
	}
}
