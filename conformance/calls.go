package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/check"
)

// result is one checked response.
type result struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the check if it cannot.
func (c *scenarioRun) decode(r *result, v any) {
	if err := json.Unmarshal(r.Body, v); err != nil {
		c.fatalf("decode the body (%d): %v: %s", r.Status, err, truncate(r.Body))
	}
}

// call makes one request (path relative to the base URL), waits out a 429
// and tries again (at most three times), and holds every exchange to the
// checker.
func (c *scenarioRun) call(method, path, token string, body any) *result {
	return c.callRaw(method, path, "Bearer "+token, body, token == "")
}

func (c *scenarioRun) callRaw(method, path, authorization string, body any, noAuth bool) *result {
	var data []byte
	contentType := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		data, contentType = b, "application/json"
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			c.fatalf("%v", err)
		}
		contentType = "application/json"
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(c.ctx, method, c.s.base+path, bytes.NewReader(data))
		if err != nil {
			c.fatalf("%v", err)
		}
		if data == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if !noAuth {
			req.Header.Set("Authorization", authorization)
		}
		// The checker sees the path from /api/v1, wherever the base URL puts it.
		checkURL := &url.URL{Path: check.BasePath + strings.TrimPrefix(req.URL.Path, c.s.prefix), RawQuery: req.URL.RawQuery}
		p := c.s.checker.Begin(method, checkURL, req.Header.Get("Authorization"))
		resp, err := c.s.client.Do(req)
		if err != nil {
			c.s.checker.Abandon(p)
			if c.ctx.Err() != nil {
				c.fatalf("%s %s: %v", method, path, context.Cause(c.ctx))
			}
			c.fatalf("%s %s: %v", method, path, cleanErr(err))
		}
		rb, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			c.s.checker.Abandon(p)
			c.fatalf("%s %s: read the body: %v", method, path, err)
		}
		res := c.s.checker.Finish(p, &check.Exchange{Method: method, URL: checkURL, Header: req.Header, Body: data,
			Status: resp.StatusCode, ResponseHeader: resp.Header, ResponseBody: rb})
		for _, v := range res.Violations {
			c.violated(Violation{Method: method, Path: path, Credential: masked(authorization, noAuth), Status: resp.StatusCode,
				Rule: v.Rule, At: v.Path, Message: check.ScrubTokens(v.Message)})
		}
		r := &result{Status: resp.StatusCode, Header: resp.Header, Body: rb}
		if r.Status != http.StatusTooManyRequests || attempt == 3 {
			return r
		}
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || secs < 0 {
			secs = 60
		}
		c.logf("%s %s: 429, waiting %d s as Retry-After says", method, path, secs)
		if err := c.s.wait(c.ctx, time.Duration(secs)*time.Second+time.Second); err != nil {
			c.fatalf("%v", err)
		}
	}
}

func (s *suite) wait(ctx context.Context, d time.Duration) error {
	if s.cfg.Wait != nil {
		return s.cfg.Wait(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cleanErr drops the address from a client error.
func cleanErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// expect fails the check unless the status is one of want.
func (c *scenarioRun) expect(r *result, what string, want ...int) bool {
	if !slices.Contains(want, r.Status) {
		c.errorf("%s: got %d, want %v: %s", what, r.Status, want, truncate(r.Body))
		return false
	}
	return true
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// keys by purpose.
func (s *suite) readKey() string     { return first(s.cfg.Keys.Read, s.cfg.Keys.All) }
func (s *suite) generateKey() string { return first(s.cfg.Keys.Generate, s.cfg.Keys.All) }
func (s *suite) spendKey() string    { return first(s.cfg.Keys.All, s.cfg.Keys.Generate) }

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// scopes reads the scopes of a key from GET /account: nil and the status
// when the key cannot read the account.
func (c *scenarioRun) scopes(token string) ([]string, int) {
	r := c.call(http.MethodGet, "/account", token, nil)
	if r.Status != http.StatusOK {
		return nil, r.Status
	}
	var a struct {
		Scopes []string `json:"scopes"`
	}
	c.decode(r, &a)
	return a.Scopes, r.Status
}

// cheapest is the model a creation uses: the lowest credits_per_output
// among models that need no reference image, images first on a tie.
func (c *scenarioRun) cheapest() (model, bool) {
	if c.s.models == nil {
		key := c.s.readKey()
		if key == "" {
			return model{}, false
		}
		r := c.call(http.MethodGet, "/models", key, nil)
		if r.Status != http.StatusOK {
			return model{}, false
		}
		var cat struct {
			Modalities map[string][]model `json:"modalities"`
		}
		c.decode(r, &cat)
		c.s.models = []model{}
		for _, ms := range cat.Modalities {
			c.s.models = append(c.s.models, ms...)
		}
		sort.Slice(c.s.models, func(i, j int) bool {
			a, b := c.s.models[i], c.s.models[j]
			if a.CreditsPerOutput != b.CreditsPerOutput {
				return a.CreditsPerOutput < b.CreditsPerOutput
			}
			if (a.Modality == "image") != (b.Modality == "image") {
				return a.Modality == "image"
			}
			return a.ID < b.ID
		})
	}
	for _, m := range c.s.models {
		if !m.RequiresReferenceImage {
			return m, true
		}
	}
	return model{}, false
}

// masked is a credential as the report shows it: never a character of the
// secret.
func masked(authorization string, noAuth bool) string {
	if noAuth {
		return ""
	}
	return check.Mask(authorization)
}
