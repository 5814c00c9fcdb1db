package conformance_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/conformance"
)

// TestConformance checks the server at MEDIAMOCK_CONFORMANCE_URL.
func TestConformance(t *testing.T) {
	cfg, ok := conformance.FromEnv(os.Getenv)
	if !ok {
		t.Skipf("set %s to a base URL (with /api/v1) and %s, %s, %s (optionally %s, and %s=1 to create a generation) to check a running server",
			conformance.EnvURL, conformance.EnvKeyRead, conformance.EnvKeyGenerate, conformance.EnvKeyPublish, conformance.EnvKeyAll, conformance.EnvSpendCredits)
	}
	conformance.Run(t, cfg)
}

// TestConformanceOfTheMock runs the suite against this mock, in-process:
// it must pass with no failure.
func TestConformanceOfTheMock(t *testing.T) {
	srv := mediamock.RunT(t)
	rep := conformance.Run(t, conformance.Config{
		BaseURL: srv.BaseURL(), Client: srv.Client(), SpendCredits: true,
		Keys: conformance.Keys{Read: mediamock.KeyReadOnly, Generate: mediamock.KeyGenerateOnly, Publish: mediamock.KeyPublishOnly, All: mediamock.KeyAllScopes},
		Wait: func(_ context.Context, d time.Duration) error { return srv.Advance(d) },
	})
	if n := rep.Failed(); n > 0 {
		t.Errorf("%d rules failed:\n%s", n, rep.Table())
	}
}
