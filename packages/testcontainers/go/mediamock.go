// Package mediamock is a Testcontainers module for mediamock, the stateful
// mock of the media generation service's REST API v1: it starts the mock's
// container image, waits until GET /_mock/health answers 200 on port 8080,
// and tells the URLs, the default test keys and the sandboxes of the control
// API.
//
//	ctr, err := mediamock.Run(ctx, "localhost/mediamock:dev", mediamock.WithClock("manual"))
//	defer testcontainers.TerminateContainer(ctr)
//	base, _ := ctr.BaseURL(ctx) // http://127.0.0.1:NNNNN/api/v1, with mediamock.APIKey
package mediamock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Port is the port the image listens on (MOCKSERVER_ADDR=0.0.0.0:8080).
const Port = "8080/tcp"

// FixturesPath is where WithFixtures copies the fixture file in the container.
const FixturesPath = "/fixtures.json"

// APIKey is the default fixture's key with every scope (read, generate,
// publish) in the workspace Acme Studio.
const APIKey = "mk_test_all_scopes"

// DefaultKeys are the default fixture's API keys by name, as `mockserver keys`
// prints them. They are fixed strings of the embedded fixture: with
// WithFixtures, the keys are the file's.
var DefaultKeys = map[string]string{
	"all_scopes":    "mk_test_all_scopes",    // Acme Studio, pro: read generate publish
	"read_only":     "mk_test_read_only",     // Acme Studio, pro: read
	"generate_only": "mk_test_generate_only", // Acme Studio, pro: generate
	"publish_only":  "mk_test_publish_only",  // Acme Studio, pro: publish
	"free_plan":     "mk_test_free_plan",     // Pixel Garage, free
	"business":      "mk_test_business",      // Northwind Media, business
	"no_credits":    "mk_test_no_credits",    // Empty Wallet Co, creator, no credits
}

// Container is a started mediamock container.
type Container struct {
	testcontainers.Container
	controlToken string
}

// Run starts the image (a mediamock image, e.g. one built from the
// repository's Dockerfile) and waits until GET /_mock/health answers 200.
// The options are this package's (WithSeed, WithClock, WithFixtures,
// WithControlToken) and any of testcontainers' (testcontainers.WithEnv, ...).
// On an error after the container was created, the container is returned too
// so that the caller can terminate it.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	all := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(Port),
		testcontainers.WithWaitStrategy(
			wait.ForHTTP("/_mock/health").
				WithPort(Port).
				WithStatusCodeMatcher(func(status int) bool { return status == http.StatusOK }).
				WithStartupTimeout(60 * time.Second).
				WithPollInterval(100 * time.Millisecond),
		),
	}
	all = append(all, opts...)
	ctr, err := testcontainers.Run(ctx, img, all...)
	var c *Container
	if ctr != nil {
		c = &Container{Container: ctr}
	}
	if err != nil {
		return c, fmt.Errorf("run mediamock: %w", err)
	}
	// The control token is whatever the container was given, by
	// WithControlToken or by testcontainers.WithEnv.
	info, err := ctr.Inspect(ctx)
	if err != nil {
		return c, fmt.Errorf("run mediamock: inspect: %w", err)
	}
	if info.Config != nil {
		for _, kv := range info.Config.Env {
			if v, ok := strings.CutPrefix(kv, "MOCKSERVER_CONTROL_TOKEN="); ok {
				c.controlToken = v
			}
		}
	}
	return c, nil
}

// WithSeed sets the seed of the fixtures' fake data (MOCKSERVER_SEED).
func WithSeed(seed uint64) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"MOCKSERVER_SEED": strconv.FormatUint(seed, 10)})
}

// WithClock sets the clock mode (MOCKSERVER_CLOCK): "real" (the default),
// "virtual" or "manual". With sandboxes, use real or manual.
func WithClock(mode string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"MOCKSERVER_CLOCK": mode})
}

// WithFixtures copies the fixture file at hostPath into the container (at
// FixturesPath) and makes the server load it (MOCKSERVER_FIXTURES) in place
// of the embedded default. The keys are then the file's, not DefaultKeys.
func WithFixtures(hostPath string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		if _, err := os.Stat(hostPath); err != nil {
			return fmt.Errorf("mediamock fixtures: %w", err)
		}
		if err := testcontainers.WithFiles(testcontainers.ContainerFile{
			HostFilePath: hostPath, ContainerFilePath: FixturesPath, FileMode: 0o644,
		})(req); err != nil {
			return err
		}
		return testcontainers.WithEnv(map[string]string{"MOCKSERVER_FIXTURES": FixturesPath})(req)
	}
}

// WithControlToken protects the control API (/_mock) with a token
// (MOCKSERVER_CONTROL_TOKEN): every control call but the health check then
// needs it, and this package's calls send it.
func WithControlToken(token string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"MOCKSERVER_CONTROL_TOKEN": token})
}

// URL is the server's root, http://host:port, as seen from the test.
func (c *Container) URL(ctx context.Context) (string, error) {
	return c.PortEndpoint(ctx, Port, "http")
}

// BaseURL is the REST API's base URL, URL + "/api/v1".
func (c *Container) BaseURL(ctx context.Context) (string, error) {
	u, err := c.URL(ctx)
	if err != nil {
		return "", err
	}
	return u + "/api/v1", nil
}

// ControlURL is the control API's root, URL + "/_mock".
func (c *Container) ControlURL(ctx context.Context) (string, error) {
	u, err := c.URL(ctx)
	if err != nil {
		return "", err
	}
	return u + "/_mock", nil
}

// ControlToken is the server's control token, empty when it has none.
func (c *Container) ControlToken() string { return c.controlToken }

// Keys are the default fixture's keys by name (DefaultKeys, a copy).
func (c *Container) Keys() map[string]string {
	m := make(map[string]string, len(DefaultKeys))
	for k, v := range DefaultKeys {
		m[k] = v
	}
	return m
}

// Sandbox is a fresh workspace of its own on the server, made by
// POST /_mock/sandboxes: its own keys, faults, journal, coverage and ledger.
type Sandbox struct {
	ID          string            `json:"id"`
	WorkspaceID int64             `json:"workspace_id"`
	APIKey      string            `json:"api_key"` // the key with the most scopes
	Keys        map[string]string `json:"keys"`    // by name: all_scopes, read_only, ...
	// ControlToken (sbc_...) reaches this sandbox alone on the control API.
	ControlToken string `json:"control_token"`
	// BaseURL is the REST API's base URL as seen from the test (the
	// container's mapped port).
	BaseURL string `json:"-"`
	// Raw is the whole answer of POST /_mock/sandboxes.
	Raw map[string]any `json:"-"`
}

// SandboxOption sets a field of the POST /_mock/sandboxes body.
type SandboxOption func(body map[string]any)

// SandboxName names the sandbox.
func SandboxName(name string) SandboxOption {
	return func(b map[string]any) { b["name"] = name }
}

// SandboxFrom starts the sandbox as the named fixture workspace (Acme Studio
// by default).
func SandboxFrom(workspace string) SandboxOption {
	return func(b map[string]any) { b["from"] = workspace }
}

// SandboxField sets any other field of the body (plan, credits, keys, ...;
// see control.json).
func SandboxField(name string, value any) SandboxOption {
	return func(b map[string]any) { b[name] = value }
}

// Sandbox creates a sandbox over the control API (with the server's control
// token when it has one) and returns it with its cleanup, which deletes it
// (with the sandbox's own control token): call it when the test ends, e.g.
// t.Cleanup(func() { cleanup(context.Background()) }).
func (c *Container) Sandbox(ctx context.Context, opts ...SandboxOption) (*Sandbox, func(context.Context) error, error) {
	body := map[string]any{}
	for _, o := range opts {
		o(body)
	}
	control, err := c.ControlURL(ctx)
	if err != nil {
		return nil, nil, err
	}
	base, err := c.BaseURL(ctx)
	if err != nil {
		return nil, nil, err
	}
	raw, err := call(ctx, http.MethodPost, control+"/sandboxes", c.controlToken, body, http.StatusCreated)
	if err != nil {
		return nil, nil, fmt.Errorf("mediamock sandbox: %w", err)
	}
	sb := &Sandbox{BaseURL: base}
	if err := json.Unmarshal(raw, sb); err != nil {
		return nil, nil, fmt.Errorf("mediamock sandbox: %w", err)
	}
	_ = json.Unmarshal(raw, &sb.Raw)
	if sb.ID == "" || sb.ControlToken == "" || sb.APIKey == "" {
		return nil, nil, fmt.Errorf("mediamock sandbox: incomplete answer: %s", raw)
	}
	cleanup := func(ctx context.Context) error {
		_, err := call(ctx, http.MethodDelete, control+"/sandboxes/"+sb.ID, sb.ControlToken, nil, 0)
		if err != nil {
			return fmt.Errorf("mediamock sandbox %s: delete: %w", sb.ID, err)
		}
		return nil
	}
	return sb, cleanup, nil
}

// call sends a JSON control request; want 0 accepts any 2xx.
func call(ctx context.Context, method, url, token string, body any, want int) ([]byte, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if (want != 0 && resp.StatusCode != want) || resp.StatusCode/100 != 2 {
		return out, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}
