package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// checks run in this order; each needs only HTTP and the keys.
var checks = []scenario{
	{"document.served", "GET /openapi.json answers a JSON OpenAPI document", checkDocument},
	{"auth.missing_credentials", "no Authorization: 401 with the error object", checkMissingCredentials},
	{"auth.invalid_credentials", "an unknown bearer token: 401 with the error object", checkInvalidCredentials},
	{"reads.shapes", "every read endpoint answers 200 in its openapi.json shape", checkReads},
	{"scope.read_cannot_generate", "a read-only key cannot POST /generations: 403", checkReadCannotGenerate},
	{"scope.generate_cannot_read", "a generate-only key cannot GET /account: 403", checkGenerateCannotRead},
	{"scope.publish_cannot_read", "a publish-only key cannot GET /assets: 403", checkPublishCannotRead},
	{"validation.bad_inputs", "bad query values and bodies: 400 with the error object", checkBadInputs},
	{"lists.pagination", "pages of limit=2 followed by next_cursor: ids descending across pages, none twice", checkPagination},
	{"paths.unknown", "a path outside every operation: 404 with the error object", checkUnknownPath},
	{"resources.by_id", "a listed asset reads by id on /assets/{id} and /generations/{id}; an unknown id is a 4xx with the error object", checkByID},
	{"generation.lifecycle", "a generation with the cheapest model: 201, charge and balance, then polled to completed or failed", checkGeneration},
}

// noSuchModel is a model id no catalog has: a request that carries it can
// create nothing, whatever else the server lets through.
const noSuchModel = "conformance-no-such-model"

func checkDocument(c *scenarioRun) {
	r := c.call(http.MethodGet, "/openapi.json", "", nil)
	if !c.expect(r, "GET /openapi.json", http.StatusOK) {
		return
	}
	var doc map[string]any
	c.decode(r, &doc)
	if _, ok := doc["openapi"].(string); !ok {
		c.errorf("GET /openapi.json: no openapi version field: %s", truncate(r.Body))
	}
	if info, ok := doc["info"].(map[string]any); ok {
		c.note("version %v", info["version"])
	}
}

func checkMissingCredentials(c *scenarioRun) {
	r := c.call(http.MethodGet, "/account", "", nil)
	c.expect(r, "GET /account without Authorization", http.StatusUnauthorized)
}

func checkInvalidCredentials(c *scenarioRun) {
	r := c.callRaw(http.MethodGet, "/account", "Bearer mk_conformance_not_a_key_000000", nil, false)
	c.expect(r, "GET /account with an unknown key", http.StatusUnauthorized)
	r = c.callRaw(http.MethodGet, "/account", "Basic Y29uZm9ybWFuY2U6bm8=", nil, false)
	c.expect(r, "GET /account with Basic credentials", http.StatusUnauthorized)
}

func checkReads(c *scenarioRun) {
	key := c.s.readKey()
	if key == "" {
		c.skip("needs %s or %s", keyRead, keyAll)
	}
	paths := []string{"/account", "/models", "/models?modality=image", "/models?modality=audio&track=voice", "/assets", "/assets?kind=image&limit=5",
		"/encore/effects", "/characters", "/brand_kits", "/projects", "/social/accounts", "/social/publications"}
	for _, p := range paths {
		c.expect(c.call(http.MethodGet, p, key, nil), "GET "+p, http.StatusOK)
	}
	c.note("%d reads", len(paths))
}

func checkReadCannotGenerate(c *scenarioRun) {
	key := c.s.cfg.Keys.Read
	if key == "" {
		c.skip("needs %s", keyRead)
	}
	scopes, status := c.scopes(key)
	if status != http.StatusOK {
		c.fatalf("GET /account with the read key: %d", status)
	}
	if slices.Contains(scopes, "generate") {
		c.skip("%s also has the generate scope (%s)", keyRead, strings.Join(scopes, ", "))
	}
	body := map[string]any{"modality": "image", "model_id": noSuchModel, "prompt": "a conformance check that must be refused"}
	if c.s.cfg.SpendCredits {
		// A real model: a server that forgot the scope would charge, and
		// spending is allowed.
		if m, ok := c.cheapest(); ok {
			body = creation(m)
		}
	}
	c.expect(c.call(http.MethodPost, "/generations", key, body), "POST /generations with a read-only key", http.StatusForbidden)
}

func checkGenerateCannotRead(c *scenarioRun) {
	key := c.s.cfg.Keys.Generate
	if key == "" {
		c.skip("needs %s", keyGenerate)
	}
	scopes, status := c.scopes(key)
	if status == http.StatusOK && slices.Contains(scopes, "read") {
		c.skip("%s also has the read scope (%s)", keyGenerate, strings.Join(scopes, ", "))
	}
	if status != http.StatusForbidden {
		c.errorf("GET /account with a generate-only key: got %d, want 403", status)
	}
}

func checkPublishCannotRead(c *scenarioRun) {
	key := c.s.cfg.Keys.Publish
	if key == "" {
		c.skip("needs %s", keyPublish)
	}
	r := c.call(http.MethodGet, "/assets", key, nil)
	if r.Status == http.StatusOK {
		if scopes, _ := c.scopes(key); slices.Contains(scopes, "read") {
			c.skip("%s also has the read scope (%s)", keyPublish, strings.Join(scopes, ", "))
		}
	}
	c.expect(r, "GET /assets with a publish-only key", http.StatusForbidden)
}

func checkBadInputs(c *scenarioRun) {
	type bad struct {
		method, path string
		body         any
	}
	var cases []bad
	if key := c.s.readKey(); key != "" {
		for _, q := range []string{"/assets?limit=0", "/assets?limit=51", "/assets?kind=hologram", "/assets?starting_after=abc",
			"/models?modality=hologram", "/assets?status=lost"} {
			cases = append(cases, bad{http.MethodGet, q, nil})
		}
	}
	if c.s.generateKey() != "" {
		// Every body names a model no catalog has: even a server that let
		// the broken rule through could create nothing.
		gen := func(extra map[string]any) map[string]any {
			b := map[string]any{"modality": "image", "model_id": noSuchModel, "prompt": "a conformance check that must be refused"}
			for k, v := range extra {
				b[k] = v
			}
			return b
		}
		cases = append(cases,
			bad{http.MethodPost, "/generations", map[string]any{}},
			bad{http.MethodPost, "/generations", []byte(`{"modality": "image", "prompt": `)},
			bad{http.MethodPost, "/generations", gen(map[string]any{"count": 9})},
			bad{http.MethodPost, "/generations", gen(map[string]any{"modality": "hologram"})},
			bad{http.MethodPost, "/generations", gen(map[string]any{"prompt": strings.Repeat("a", 5001)})},
			bad{http.MethodPost, "/generations", gen(map[string]any{"wait_seconds": 56})},
			bad{http.MethodPost, "/generations", gen(map[string]any{"reference_asset_ids": []int{1, 2, 3, 4, 5}})},
			bad{http.MethodPost, "/uploads", map[string]any{"title": "no image"}},
		)
	}
	if len(cases) == 0 {
		c.skip("needs a key with the read or the generate scope")
	}
	for _, b := range cases {
		key := c.s.readKey()
		if b.method == http.MethodPost {
			key = c.s.generateKey()
		}
		c.expect(c.call(b.method, b.path, key, b.body), fmt.Sprintf("%s %s (a bad input)", b.method, b.path), http.StatusBadRequest)
	}
	c.note("%d bad inputs", len(cases))
}

func checkPagination(c *scenarioRun) {
	key := c.s.readKey()
	if key == "" {
		c.skip("needs %s or %s", keyRead, keyAll)
	}
	var walked []string
	for _, list := range []string{"/assets", "/projects", "/brand_kits", "/social/publications"} {
		var ids []int64
		cursor := ""
		pages := 0
		for pages < 3 {
			r := c.call(http.MethodGet, list+"?limit=2"+cursor, key, nil)
			if !c.expect(r, "GET "+list+"?limit=2"+cursor, http.StatusOK) {
				break
			}
			pages++
			var page struct {
				Data []struct {
					ID int64 `json:"id"`
				} `json:"data"`
				HasMore    bool   `json:"has_more"`
				NextCursor *int64 `json:"next_cursor"`
			}
			c.decode(r, &page)
			if len(page.Data) > 2 {
				c.errorf("GET %s?limit=2: %d items", list, len(page.Data))
			}
			for _, it := range page.Data {
				if len(ids) > 0 && it.ID >= ids[len(ids)-1] {
					c.errorf("GET %s: id %d after id %d across pages: not newest first", list, it.ID, ids[len(ids)-1])
				}
				if slices.Contains(ids, it.ID) {
					c.errorf("GET %s: id %d on two pages", list, it.ID)
				}
				ids = append(ids, it.ID)
			}
			if !page.HasMore || page.NextCursor == nil {
				break
			}
			cursor = fmt.Sprintf("&starting_after=%d", *page.NextCursor)
		}
		walked = append(walked, fmt.Sprintf("%s %d items on %d pages", list, len(ids), pages))
	}
	c.note("%s", strings.Join(walked, ", "))
}

func checkUnknownPath(c *scenarioRun) {
	key := first(c.s.readKey(), c.s.generateKey(), c.s.cfg.Keys.Publish)
	if key == "" {
		c.skip("needs a key")
	}
	c.expect(c.call(http.MethodGet, "/conformance/no-such-path", key, nil), "GET /conformance/no-such-path", http.StatusNotFound)
}

func checkByID(c *scenarioRun) {
	key := c.s.readKey()
	if key == "" {
		c.skip("needs %s or %s", keyRead, keyAll)
	}
	r := c.call(http.MethodGet, "/assets?limit=1", key, nil)
	if !c.expect(r, "GET /assets?limit=1", http.StatusOK) {
		return
	}
	var page struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	c.decode(r, &page)
	if len(page.Data) > 0 {
		id := page.Data[0].ID
		for _, p := range []string{"/assets/%d", "/generations/%d"} {
			path := fmt.Sprintf(p, id)
			r := c.call(http.MethodGet, path, key, nil)
			if !c.expect(r, "GET "+path, http.StatusOK) {
				continue
			}
			var g struct {
				Assets []struct {
					ID int64 `json:"id"`
				} `json:"assets"`
			}
			c.decode(r, &g)
			if !slices.ContainsFunc(g.Assets, func(a struct {
				ID int64 `json:"id"`
			}) bool {
				return a.ID == id
			}) {
				c.errorf("GET %s: asset %d is not among the assets: %s", path, id, truncate(r.Body))
			}
		}
	} else {
		c.note("the library is empty: no asset read by id")
	}
	r = c.call(http.MethodGet, "/assets/999999999999", key, nil)
	if r.Status < 400 || r.Status >= 500 {
		c.errorf("GET /assets/999999999999: got %d, want a 4xx", r.Status)
	}
	c.note("an unknown asset id answers %d", r.Status)
}

// creation is the body of a generation with a model, at its defaults.
func creation(m model) map[string]any {
	body := map[string]any{"modality": m.Modality, "model_id": m.ID, "prompt": "A small red cube on a white table, a conformance check"}
	if m.Modality == "audio" {
		body["track"] = m.Track
		if m.Track == "voice" {
			body["prompt"] = "This is a conformance check."
		}
	}
	return body
}

func checkGeneration(c *scenarioRun) {
	if !c.s.cfg.SpendCredits {
		c.skip("spends credits: set %s to allow one generation with the cheapest model", spending)
	}
	key := c.s.spendKey()
	if key == "" {
		c.skip("needs %s or %s", keyAll, keyGenerate)
	}
	m, ok := c.cheapest()
	if !ok {
		c.skip("no model without a reference image could be read from GET /models (needs a read key)")
	}
	if key == c.s.cfg.Keys.All {
		// The balance just before, for credits.balance.
		c.expect(c.call(http.MethodGet, "/account", key, nil), "GET /account", http.StatusOK)
	}
	r := c.call(http.MethodPost, "/generations", key, creation(m))
	if r.Status == http.StatusPaymentRequired {
		c.skip("the workspace cannot pay for %s (%d credits): 402", m.ID, m.CreditsPerOutput)
	}
	if !c.expect(r, "POST /generations with "+m.ID, http.StatusCreated) {
		return
	}
	var g struct {
		Assets []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"assets"`
		CreditsCharged int64 `json:"credits_charged"`
		CreditsBalance int64 `json:"credits_balance"`
		Gift           bool  `json:"covered_by_monthly_gift"`
	}
	c.decode(r, &g)
	if len(g.Assets) == 0 {
		c.fatalf("POST /generations: no assets: %s", truncate(r.Body))
	}
	for _, a := range g.Assets {
		if a.Status != "queued" && a.Status != "processing" {
			c.errorf("POST /generations: asset %d is %s; a created asset is queued or processing", a.ID, a.Status)
		}
	}
	if !g.Gift && m.Modality == "image" && g.CreditsCharged != m.CreditsPerOutput {
		c.errorf("POST /generations: one image of %s charged %d credits; its credits_per_output is %d", m.ID, g.CreditsCharged, m.CreditsPerOutput)
	}
	c.note("%s charged %d, balance %d", m.ID, g.CreditsCharged, g.CreditsBalance)
	id := g.Assets[0].ID
	status := ""
	readKey := c.s.readKey()
	if readKey == "" {
		c.note("no read key: not polled")
		return
	}
	for i := 0; i < 20 && status != "completed" && status != "failed"; i++ {
		r := c.call(http.MethodGet, fmt.Sprintf("/generations/%d?wait_seconds=55", id), readKey, nil)
		if !c.expect(r, "GET /generations/{id}", http.StatusOK) {
			return
		}
		var read struct {
			Status string `json:"status"`
			Assets []struct {
				ID       int64  `json:"id"`
				Status   string `json:"status"`
				URL      string `json:"url"`
				MimeType string `json:"mime_type"`
			} `json:"assets"`
		}
		c.decode(r, &read)
		status = read.Status
		for _, a := range read.Assets {
			if a.Status == "completed" && (a.URL == "" || a.MimeType == "") {
				c.errorf("asset %d is completed without url or mime_type", a.ID)
			}
		}
	}
	if status != "completed" && status != "failed" {
		c.errorf("asset %d is still %s after 20 polls of 55 s", id, status)
		return
	}
	c.note("asset %d %s", id, status)
	r = c.call(http.MethodGet, "/assets?limit=1", readKey, nil)
	if c.expect(r, "GET /assets?limit=1", http.StatusOK) {
		var page struct {
			Data []struct {
				ID int64 `json:"id"`
			} `json:"data"`
		}
		c.decode(r, &page)
		if len(page.Data) == 0 || page.Data[0].ID < id {
			c.errorf("GET /assets?limit=1 after creating asset %d: the newest is not first: %s", id, truncate(r.Body))
		}
	}
}

// The keys and settings as skips name them: by the Go test's variable and
// the command's flag.
const (
	keyRead     = "the read-only key (" + EnvKeyRead + ", --key-read)"
	keyGenerate = "the generate-only key (" + EnvKeyGenerate + ", --key-generate)"
	keyPublish  = "the publish-only key (" + EnvKeyPublish + ", --key-publish)"
	keyAll      = "the key with every scope (" + EnvKeyAll + ", --key-all)"
	spending    = EnvSpendCredits + "=1 (--spend-credits)"
)
