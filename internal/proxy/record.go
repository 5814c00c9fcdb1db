package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/check"
)

// FixtureFile is the name of the recording in the record directory.
const FixtureFile = "fixture.json"

// ReplayTokenPrefix starts the API keys of a recording: mk_replay_1 stands
// for the first credential recorded, and so on. Recorded tokens are never
// written.
const ReplayTokenPrefix = "mk_replay_"

// recorder keeps what a fixture needs from the exchanges: the accounts, the
// model catalog, the projects and the assets, by workspace.
type recorder struct {
	dir string
	log *slog.Logger

	mu       sync.Mutex
	creds    map[string]*recCred // by token digest
	order    []string            // digests, in the order first seen
	accounts map[int64]*recAccount
	models   []json.RawMessage
	assets   map[string]map[int64]map[string]any // by group, then id: the latest view of each asset
	projects map[string]map[int64]map[string]any
	timing   timingTracker // the jobs created through the proxy, and what their answers showed
}

type recCred struct {
	masked    string
	workspace int64
	known     bool
	scopes    []string
}

type recAccount struct {
	name, plan        string
	balance           int64
	rateLimit         int64
	publishingAllowed bool
	gifts             []fixtures.Gift
}

func newRecorder(dir string, log *slog.Logger) *recorder {
	return &recorder{dir: dir, log: log, creds: map[string]*recCred{}, accounts: map[int64]*recAccount{},
		assets: map[string]map[int64]map[string]any{}, projects: map[string]map[int64]map[string]any{}}
}

// answer is one exchange of the API, as the recorder needs it.
type answer struct {
	authorization string
	secrets       *check.Secrets
	opID          string
	status        int
	request, body []byte    // JSON bodies
	sent, at      time.Time // when the request and the answer reached the proxy
	waited        bool      // the request asked to wait (wait_seconds above 0)
}

// observe notes what a successful JSON answer tells about the workspace,
// and about the timing of the jobs created through the proxy.
func (rc *recorder) observe(x answer) {
	authorization, secrets, opID, status := x.authorization, x.secrets, x.opID, x.status
	token := check.Bearer(authorization)
	if token == "" || status >= 300 {
		return
	}
	v, ok := decodeJSON(x.body)
	if !ok {
		return
	}
	v = secrets.ScrubAll(v) // a title, a prompt or a name may hold what the client sent
	m, _ := v.(map[string]any)
	request, _ := decodeJSON(x.request)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	req, _ := request.(map[string]any)
	rc.timing.observe(observation{opID: opID, request: req, body: v, sent: x.sent, at: x.at, waited: x.waited})
	d := check.Digest(token)
	cr := rc.creds[d]
	if cr == nil {
		cr = &recCred{masked: check.Mask(authorization)}
		rc.creds[d] = cr
		rc.order = append(rc.order, d)
	}
	switch opID {
	case "getAccount":
		ws, ok := check.IntOf(m["workspace_id"])
		if !ok {
			return
		}
		cr.known, cr.workspace, cr.scopes = true, ws, nil
		if scopes, ok := m["scopes"].([]any); ok {
			for _, s := range scopes {
				if s, ok := s.(string); ok && slices.Contains(fixtures.Scopes, s) {
					cr.scopes = append(cr.scopes, s)
				}
			}
		}
		a := &recAccount{}
		a.name, _ = m["workspace_name"].(string)
		a.plan, _ = m["plan"].(string)
		a.balance, _ = check.IntOf(m["credits_balance"])
		a.rateLimit, _ = check.IntOf(m["rate_limit_per_minute"])
		a.publishingAllowed, _ = m["publishing_allowed"].(bool)
		gifts, _ := m["monthly_gifts"].([]any)
		for _, g := range gifts {
			g, _ := g.(map[string]any)
			id, _ := g["model_id"].(string)
			per, _ := check.IntOf(g["per_month"])
			if id != "" && per >= 1 {
				a.gifts = append(a.gifts, fixtures.Gift{ModelID: id, PerMonth: int(per)})
			}
		}
		rc.accounts[ws] = a
	case "createGeneration", "createEncoreCreation":
		if bal, ok := check.IntOf(m["credits_balance"]); ok && cr.known && rc.accounts[cr.workspace] != nil {
			rc.accounts[cr.workspace].balance = bal
		}
	case "listModels":
		if mods, ok := m["modalities"].(map[string]any); ok {
			rc.models = rc.models[:0]
			for _, name := range slices.Sorted(maps.Keys(mods)) {
				list, _ := mods[name].([]any)
				for _, item := range list {
					if b, err := json.Marshal(item); err == nil {
						rc.models = append(rc.models, b)
					}
				}
			}
		}
	case "listProjects":
		data, _ := m["data"].([]any)
		for _, item := range data {
			if p, ok := item.(map[string]any); ok {
				if id, ok := check.IntOf(p["id"]); ok {
					put(rc.projects, rc.group(d), id, p)
				}
			}
		}
	}
	walkAssets(v, func(a map[string]any) {
		if id, ok := check.IntOf(a["id"]); ok {
			put(rc.assets, rc.group(d), id, a)
		}
	})
}

// decodeJSON decodes a JSON body, numbers as json.Number.
func decodeJSON(b []byte) (any, bool) {
	if len(b) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

func (rc *recorder) group(d string) string {
	if cr := rc.creds[d]; cr != nil && cr.known {
		return fmt.Sprintf("ws:%d", cr.workspace)
	}
	return "cred:" + d
}

func put(m map[string]map[int64]map[string]any, group string, id int64, v map[string]any) {
	if m[group] == nil {
		m[group] = map[int64]map[string]any{}
	}
	m[group][id] = v
}

// walkAssets calls fn for every asset object in a body.
func walkAssets(v any, fn func(map[string]any)) {
	switch t := v.(type) {
	case map[string]any:
		if t["object"] == "asset" {
			fn(t)
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			walkAssets(t[k], fn)
		}
	case []any:
		for _, item := range t {
			walkAssets(item, fn)
		}
	}
}

var planID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`) })

var projectStates = []string{"active", "completed", "archived"}

// write turns the recording into a fixture that extends the default,
// checks that the mock can load it, and writes it to dir/fixture.json.
func (rc *recorder) write() (string, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	base, err := fixtures.Load("", 0)
	if err != nil {
		return "", err
	}
	w := fixtures.World{Extends: "default"}
	models := map[string]fixtures.Model{}
	for _, m := range base.Models {
		models[m.ID] = m
	}
	for _, raw := range rc.models {
		m, err := fixtureModel(raw)
		if err == nil {
			if _, dup := models[m.ID]; dup {
				continue // the default catalog has it
			}
			err = fits(fixtures.World{Extends: "default", Models: []fixtures.Model{m}})
		}
		if err != nil {
			rc.log.Warn("a recorded model does not fit the fixture's model type; left out", "err", err)
			continue
		}
		w.Models = append(w.Models, m)
		models[m.ID] = m
	}
	taken := map[string]bool{}
	for _, ws := range base.Workspaces {
		for _, k := range append(append([]fixtures.Token{}, ws.APIKeys...), ws.OAuthTokens...) {
			taken[k.Token] = true
		}
	}
	n := 0
	replayToken := func() string {
		for {
			n++
			if t := fmt.Sprintf("%s%d", ReplayTokenPrefix, n); !taken[t] {
				return t
			}
		}
	}
	// One workspace per account recorded, then one per credential whose
	// workspace stayed unknown but that saw assets.
	var groups []string
	for _, id := range sortedInts(rc.accounts) {
		groups = append(groups, fmt.Sprintf("ws:%d", id))
	}
	for _, d := range rc.order {
		if !rc.creds[d].known && len(rc.assets["cred:"+d]) > 0 {
			groups = append(groups, "cred:"+d)
		}
	}
	for _, g := range groups {
		ws := fixtures.Workspace{Plan: "pro", Credits: 0}
		if strings.HasPrefix(g, "ws:") {
			var id int64
			fmt.Sscanf(g, "ws:%d", &id)
			a := rc.accounts[id]
			ws.Name, ws.Credits, ws.RateLimitPerMinute = a.name, int(max(a.balance, 0)), int(max(a.rateLimit, 0))
			ws.Plan = strings.ToLower(a.plan)
			if !planID().MatchString(ws.Plan) {
				ws.Plan = "recorded"
			}
			if _, ok := base.Plans[ws.Plan]; !ok {
				if w.Plans == nil {
					w.Plans = map[string]fixtures.Plan{}
				}
				w.Plans[ws.Plan] = fixtures.Plan{RateLimitPerMinute: int(max(a.rateLimit, 1)), PublishingAllowed: a.publishingAllowed}
			}
			for _, gift := range a.gifts {
				if _, ok := models[gift.ModelID]; ok {
					ws.MonthlyGifts = append(ws.MonthlyGifts, gift)
				}
			}
			for _, d := range rc.order {
				if cr := rc.creds[d]; cr.known && cr.workspace == id {
					scopes := cr.scopes
					if len(scopes) == 0 {
						scopes = fixtures.Scopes
					}
					ws.APIKeys = append(ws.APIKeys, fixtures.Token{Name: "replay of " + cr.masked, Token: replayToken(), Scopes: scopes})
				}
			}
		} else {
			cr := rc.creds[strings.TrimPrefix(g, "cred:")]
			ws.Name = "Recorded workspace of " + cr.masked
			ws.APIKeys = []fixtures.Token{{Name: "replay of " + cr.masked, Token: replayToken(), Scopes: fixtures.Scopes}}
		}
		if ws.Name == "" {
			ws.Name = "Recorded workspace"
		}
		projectName := map[int64]string{}
		for _, id := range sortedInts(rc.projects[g]) {
			p := rc.projects[g][id]
			name, _ := p["name"].(string)
			status, _ := p["status"].(string)
			if name == "" || slices.ContainsFunc(ws.Projects.Items, func(x fixtures.Project) bool { return x.Name == name }) {
				continue
			}
			if !slices.Contains(projectStates, status) {
				status = "active"
			}
			projectName[id] = name
			ws.Projects.Items = append(ws.Projects.Items, fixtures.Project{Name: name, Status: status})
		}
		for _, id := range sortedInts(rc.assets[g]) {
			if la, ok := libraryAsset(rc.assets[g][id], models, projectName); ok {
				ws.Assets.Items = append(ws.Assets.Items, la)
			}
		}
		ws.BrandKits.Items, ws.Characters.Items, ws.SocialAccounts.Items = []fixtures.BrandKit{}, []fixtures.Character{}, []fixtures.SocialAccount{}
		if ws.Projects.Items == nil {
			ws.Projects.Items = []fixtures.Project{}
		}
		if ws.Assets.Items == nil {
			ws.Assets.Items = []fixtures.LibraryAsset{}
		}
		w.Workspaces = append(w.Workspaces, ws)
	}
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return "", err
	}
	data = append(data, '\n')
	path := filepath.Join(rc.dir, FixtureFile)
	if _, err := fixtures.Parse(path, data, 0); err != nil {
		return "", fmt.Errorf("the recording is not a fixture the mock loads: %w", err)
	}
	if _, err := writeTimings(rc.dir, rc.timing.timings()); err != nil {
		return "", err
	}
	return writeAtomic(rc.dir, FixtureFile, data)
}

// writeAtomic writes data to dir/name through a temporary file renamed
// into place: a reader sees the old file or the new one whole.
func writeAtomic(dir, name string, data []byte) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+strings.TrimSuffix(name, ".json")+"-*.json")
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("record: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", fmt.Errorf("record: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	return path, nil
}

// fixtureModel reads a model of the catalog as the fixture's model type:
// the same field names, no field the fixture does not know.
func fixtureModel(raw json.RawMessage) (fixtures.Model, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fixtures.Model{}, err
	}
	delete(fields, "object")
	b, _ := json.Marshal(fields)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m fixtures.Model
	if err := dec.Decode(&m); err != nil {
		return fixtures.Model{}, fmt.Errorf("model %s: %w", fields["id"], err)
	}
	return m, nil
}

// fits checks that a fixture loads.
func fits(w fixtures.World) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	_, err = fixtures.Parse("recorded model", data, 0)
	return err
}

// libraryAsset turns a completed asset into a library asset of the
// fixture: uploads (images without a model) by title, generated assets by
// model, prompt and length. Assets the fixture cannot hold (Encore videos,
// unknown models) are left out.
func libraryAsset(a map[string]any, models map[string]fixtures.Model, projects map[int64]string) (fixtures.LibraryAsset, bool) {
	if a["status"] != "completed" {
		return fixtures.LibraryAsset{}, false
	}
	kind, _ := a["kind"].(string)
	model, _ := a["model"].(string)
	title, _ := a["title"].(string)
	prompt, _ := a["prompt"].(string)
	la := fixtures.LibraryAsset{Title: title}
	if len([]rune(title)) > 160 {
		la.Title = string([]rune(title)[:160])
	}
	if pid, ok := check.IntOf(a["project_id"]); ok {
		la.Project = projects[pid]
	}
	if model == "" {
		if kind != "image" && kind != "upload" {
			return fixtures.LibraryAsset{}, false
		}
		la.Kind = "upload"
		return la, true
	}
	m, ok := models[model]
	if !ok || fixtures.KindOfModel(m) != kind {
		return fixtures.LibraryAsset{}, false
	}
	la.Kind, la.Model, la.Prompt = kind, model, prompt
	if d, ok := check.IntOf(a["duration_seconds"]); ok && slices.Contains(m.Options.Durations, int(d)) {
		la.Duration = int(d)
	}
	return la, true
}

func sortedInts[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
