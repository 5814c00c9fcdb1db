package mediamock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	mediamock "github.com/mediamock/mediamock/packages/testcontainers/go"
)

// image is the mediamock image to test, e.g. one built from the repository's
// Dockerfile: MEDIAMOCK_IMAGE=localhost/mediamock:dev go test ./...
func image(t *testing.T) string {
	t.Helper()
	img := os.Getenv("MEDIAMOCK_IMAGE")
	if img == "" {
		t.Skip("MEDIAMOCK_IMAGE is not set (an image built from the repository's Dockerfile)")
	}
	return img
}

func do(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

func TestMediamock(t *testing.T) {
	img := image(t)
	ctx := context.Background()
	start := time.Now()
	ctr, err := mediamock.Run(ctx, img, mediamock.WithClock("manual"), mediamock.WithSeed(7))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started %s in %s", img, time.Since(start).Round(time.Millisecond))
	url, err := ctr.URL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base, err := ctr.BaseURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if base != url+"/api/v1" || !strings.HasPrefix(url, "http://") {
		t.Fatalf("URL %q, BaseURL %q", url, base)
	}

	t.Run("health", func(t *testing.T) {
		code, body := do(t, "GET", url+"/_mock/health", "", "")
		if code != 200 || body["status"] != "ok" {
			t.Fatalf("GET /_mock/health: %d %v", code, body)
		}
	})

	t.Run("generation with the default key", func(t *testing.T) {
		if ctr.Keys()["all_scopes"] != mediamock.APIKey {
			t.Fatalf("Keys()[all_scopes] = %q", ctr.Keys()["all_scopes"])
		}
		code, gen := do(t, "POST", base+"/generations", mediamock.APIKey,
			`{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`)
		if code != 201 {
			t.Fatalf("POST /generations: %d %v", code, gen)
		}
		assets, _ := gen["assets"].([]any)
		if len(assets) == 0 {
			t.Fatalf("no assets: %v", gen)
		}
		id := assets[0].(map[string]any)["id"].(float64)
		code, got := do(t, "GET", base+"/generations/"+jsonNumber(id), mediamock.APIKey, "")
		if code != 200 || got["status"] != "queued" { // the manual clock: nothing moves by itself
			t.Fatalf("GET /generations/%v: %d %v", id, code, got)
		}
		if code, _ := do(t, "GET", base+"/account", "mk_not_a_key", ""); code != 401 {
			t.Fatalf("an unknown key: %d, want 401", code)
		}
	})

	t.Run("sandbox", func(t *testing.T) {
		sb, cleanup, err := ctr.Sandbox(ctx, mediamock.SandboxName("testcontainers"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sb.ControlToken, "sbc_") || sb.Keys["all_scopes"] == "" || sb.BaseURL != base {
			t.Fatalf("sandbox %+v", sb)
		}
		code, acct := do(t, "GET", sb.BaseURL+"/account", sb.APIKey, "")
		if code != 200 {
			t.Fatalf("GET /account with the sandbox's key: %d %v", code, acct)
		}
		// A fault in the sandbox strikes its requests alone.
		if code, _ := do(t, "POST", url+"/_mock/faults/responses", sb.ControlToken,
			`{"operation":"getAccount","status":503,"count":1}`); code/100 != 2 {
			t.Fatalf("POST /_mock/faults/responses with the sandbox's token: %d", code)
		}
		if code, _ := do(t, "GET", base+"/account", mediamock.APIKey, ""); code != 200 {
			t.Fatalf("the default workspace's GET /account: %d, want 200 (the fault is the sandbox's)", code)
		}
		if code, _ := do(t, "GET", sb.BaseURL+"/account", sb.APIKey, ""); code != 503 {
			t.Fatalf("the sandbox's GET /account: %d, want 503", code)
		}
		if err := cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		if code, _ := do(t, "GET", sb.BaseURL+"/account", sb.APIKey, ""); code != 401 {
			t.Fatalf("the deleted sandbox's key: %d, want 401", code)
		}
	})

	t.Run("termination", func(t *testing.T) {
		if err := testcontainers.TerminateContainer(ctr); err != nil {
			t.Fatal(err)
		}
		if _, err := ctr.Inspect(ctx); err == nil {
			t.Fatal("the container is still there after Terminate")
		}
		c := http.Client{Timeout: 2 * time.Second}
		if resp, err := c.Get(url + "/_mock/health"); err == nil {
			resp.Body.Close()
			t.Fatalf("%s still answers after Terminate: %s", url, resp.Status)
		}
	})
}

// TestOptions: a fixture file of our own, copied into the container, and a
// control token that the control API then requires (and Sandbox sends).
func TestOptions(t *testing.T) {
	img := image(t)
	ctx := context.Background()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	const key = "mk_test_from_my_fixtures"
	if !strings.Contains(string(src), `"mk_test_all_scopes"`) {
		t.Fatal("the default fixture has no mk_test_all_scopes")
	}
	fixtures := filepath.Join(t.TempDir(), "fixtures.json")
	if err := os.WriteFile(fixtures, []byte(strings.ReplaceAll(string(src), `"mk_test_all_scopes"`, `"`+key+`"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "ctl-secret-for-tests"
	ctr, err := mediamock.Run(ctx, img, mediamock.WithFixtures(fixtures), mediamock.WithControlToken(token))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	if ctr.ControlToken() != token {
		t.Fatalf("ControlToken() = %q", ctr.ControlToken())
	}
	url, _ := ctr.URL(ctx)
	base, _ := ctr.BaseURL(ctx)
	if code, _ := do(t, "GET", base+"/account", key, ""); code != 200 {
		t.Fatalf("the fixture file's key: %d, want 200", code)
	}
	if code, _ := do(t, "GET", base+"/account", mediamock.APIKey, ""); code != 401 {
		t.Fatalf("the default key with another fixture file: %d, want 401", code)
	}
	if code, _ := do(t, "GET", url+"/_mock/health", "", ""); code != 200 {
		t.Fatalf("health without the token: %d, want 200", code)
	}
	if code, _ := do(t, "GET", url+"/_mock/faults", "", ""); code != 401 {
		t.Fatalf("a control call without the token: %d, want 401", code)
	}
	sb, cleanup, err := ctr.Sandbox(ctx, mediamock.SandboxFrom("Acme Studio"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := do(t, "GET", sb.BaseURL+"/account", sb.APIKey, ""); code != 200 {
		t.Fatalf("the sandbox's key: %d", code)
	}
	if err := cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
