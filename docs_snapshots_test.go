package mediamock_test

import (
	"testing"

	"github.com/mediamock/mediamock"
)

// The Go snippet of docs/how-to/named-snapshots.md, as it is written there
// (TestDocsExamplesGo checks that the block is the body of this test).

func TestDocsNamedSnapshots(t *testing.T) {
	srv := mediamock.RunT(t)
	sb := srv.Sandbox(t)
	if _, err := sb.SaveSnapshot("clean"); err != nil {
		t.Fatal(err)
	}
	// ... the test changes the sandbox ...
	if err := sb.RestoreSnapshot("clean"); err != nil { // the sandbox is as it was; nothing else moved
		t.Fatal(err)
	}
}
