package sim

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
)

// BrandKit informs prompt writing.
type BrandKit struct {
	ID             uint64         `json:"id"`
	WorkspaceID    uint64         `json:"ws"`
	Name           string         `json:"name"`
	Niche          string         `json:"niche"`
	Tone           string         `json:"tone"`
	TargetAudience string         `json:"target_audience"`
	Instructions   string         `json:"instructions"`
	Colors         []string       `json:"colors"`
	Fonts          fixtures.Fonts `json:"fonts"`
	CreatedAt      Stamp          `json:"created_at"`
}

// Project groups media in the app.
type Project struct {
	ID          uint64 `json:"id"`
	WorkspaceID uint64 `json:"ws"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	CreatedAt   Stamp  `json:"created_at"`
}

// Character is a reusable visual identity.
type Character struct {
	ID          uint64 `json:"id"`
	WorkspaceID uint64 `json:"ws"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	CreatedAt   Stamp  `json:"created_at"`
}

// SocialAccount is an account connected in the app.
type SocialAccount struct {
	ID             uint64 `json:"id"`
	WorkspaceID    uint64 `json:"ws"`
	Platform       string `json:"platform"`
	Name           string `json:"name"`
	Handle         string `json:"handle"`
	Publishable    bool   `json:"publishable"`
	SupportsImages bool   `json:"supports_images"`
	CreatedAt      Stamp  `json:"created_at"`
}

// seed writes the fixture world into a new file. In a bulk write, it
// commits every few thousand records (see bulk.go).
func (t *tx) seed() error {
	w := t.e.world
	for _, fw := range w.Workspaces {
		if _, err := t.addWorkspace(fw); err != nil {
			return err
		}
	}
	return nil
}

// addWorkspace creates a workspace with everything it holds. It calls
// t.step after each record: no *bolt.Bucket is kept across that call, whose
// commit may begin a new transaction.
func (t *tx) addWorkspace(fw fixtures.Workspace) (*Workspace, error) {
	return t.addWorkspaceWith(fw, nil)
}

// addWorkspaceWith is addWorkspace, recording in ids the ids its starting
// records are given (nil: not recorded).
func (t *tx) addWorkspaceWith(fw fixtures.Workspace, ids *StartIDs) (*Workspace, error) {
	var id uint64
	created := StampOf(t.now)
	if c := t.library; c != nil { // copied in batches beforehand (sandbox_copy.go)
		if err := c.adopt(t, &fw, ids); err != nil {
			return nil, err
		}
		id, created = c.ws, c.created
	} else {
		var err error
		if id, err = t.b(bWorkspaces).NextSequence(); err != nil {
			return nil, err
		}
	}
	ws, err := t.seedWorkspace(id, created, fw, ids)
	if err != nil {
		return nil, err
	}
	for _, k := range fw.APIKeys {
		if err := t.putToken(Token{Token: k.Token, WorkspaceID: id, Type: "api_key", Name: k.Name, Scopes: k.Scopes}); err != nil {
			return nil, err
		}
		if err := t.step(); err != nil {
			return nil, err
		}
	}
	for _, k := range fw.OAuthTokens {
		if err := t.putToken(Token{Token: k.Token, WorkspaceID: id, Type: "oauth", Name: k.Name, Scopes: k.Scopes}); err != nil {
			return nil, err
		}
		if err := t.step(); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// StartIDs are the ids a sandbox's starting records were given, by bucket:
// the first of each run of ids, which a reset gives them again, so that a
// reset sandbox reads back as it started. A bucket whose ids did not run
// on is not kept (its records get new ids on a reset).
type StartIDs struct {
	First map[string]uint64 `json:"first"`
	count map[string]uint64
	last  map[string]uint64
	// replay gives the records the kept ids instead of new ones.
	replay bool
}

// next is the id record i of bucket is given on a replay; 0 otherwise
// (a new one).
func (s *StartIDs) next(bucket []byte, i int) uint64 {
	if s == nil || !s.replay {
		return 0
	}
	if f, ok := s.First[string(bucket)]; ok {
		return f + uint64(i)
	}
	return 0
}

// saw records the id record i of bucket was given.
func (s *StartIDs) saw(bucket []byte, i int, id uint64) {
	if s == nil || s.replay {
		return
	}
	if s.First == nil {
		s.First, s.count, s.last = map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	}
	b := string(bucket)
	if i == 0 {
		s.First[b] = id
	}
	s.count[b]++
	s.last[b] = id
}

// keep drops the buckets whose ids did not run on without a gap.
func (s *StartIDs) keep() {
	for b, f := range s.First {
		if s.last[b]-f+1 != s.count[b] {
			delete(s.First, b)
		}
	}
}

// seedWorkspace writes workspace id as the fixture describes it, but its
// keys: its record, its starting credits, and what it already holds (brand
// kits, projects, characters, social accounts, library), dated from
// created. ids, when set, records the ids the records are given or, on a
// replay, gives them those.
func (t *tx) seedWorkspace(id uint64, created Stamp, fw fixtures.Workspace, ids *StartIDs) (*Workspace, error) {
	plan := t.e.world.Plans[fw.Plan]
	limit := plan.RateLimitPerMinute
	if fw.RateLimitPerMinute > 0 {
		limit = fw.RateLimitPerMinute
	}
	ws := &Workspace{
		ID: id, Name: fw.Name, Plan: fw.Plan, RateLimit: limit, PublishingAllowed: plan.PublishingAllowed,
		Balance: int64(fw.Credits), CreatedAt: created,
	}
	for _, g := range fw.MonthlyGifts {
		ws.Gifts = append(ws.Gifts, GiftState{ModelID: g.ModelID, PerMonth: g.PerMonth})
	}
	if err := t.putWorkspace(ws); err != nil {
		return nil, err
	}
	if err := t.step(); err != nil {
		return nil, err
	}
	if ws.Balance > 0 {
		if err := t.record(ws, LedgerEntry{Type: LedgerGrant, Amount: ws.Balance, Description: "initial credits"}); err != nil {
			return nil, err
		}
		if err := t.step(); err != nil {
			return nil, err
		}
	}
	// Things the workspace already had are dated in the past, one a day.
	now := created.Time()
	past := func(i, n int) Stamp { return StampOf(now.Add(-time.Duration(n-i) * 24 * time.Hour)) }
	for i, bk := range fw.BrandKits.Items {
		rec := &BrandKit{WorkspaceID: id, Name: bk.Name, Niche: bk.Niche, Tone: bk.Tone, TargetAudience: bk.TargetAudience,
			Instructions: bk.Instructions, Colors: bk.Colors, Fonts: *bk.Fonts, CreatedAt: past(i, len(fw.BrandKits.Items))}
		rec.ID = ids.next(bBrandKits, i)
		if err := t.insert(bBrandKits, id, &rec.ID, rec); err != nil {
			return nil, err
		}
		ids.saw(bBrandKits, i, rec.ID)
		if err := t.step(); err != nil {
			return nil, err
		}
	}
	projects := map[string]uint64{}
	for i, p := range fw.Projects.Items {
		rec := &Project{WorkspaceID: id, Name: p.Name, Status: p.Status, CreatedAt: past(i, len(fw.Projects.Items))}
		rec.ID = ids.next(bProjects, i)
		if err := t.insert(bProjects, id, &rec.ID, rec); err != nil {
			return nil, err
		}
		ids.saw(bProjects, i, rec.ID)
		if err := t.step(); err != nil {
			return nil, err
		}
		projects[p.Name] = rec.ID
	}
	for i, c := range fw.Characters.Items {
		rec := &Character{WorkspaceID: id, Name: c.Name, Description: c.Description, Status: c.Status, CreatedAt: past(i, len(fw.Characters.Items))}
		rec.ID = ids.next(bCharacters, i)
		if err := t.insert(bCharacters, id, &rec.ID, rec); err != nil {
			return nil, err
		}
		ids.saw(bCharacters, i, rec.ID)
		if err := t.step(); err != nil {
			return nil, err
		}
	}
	for i, s := range fw.SocialAccounts.Items {
		rec := &SocialAccount{WorkspaceID: id, Platform: s.Platform, Name: s.Name, Handle: s.Handle,
			Publishable: *s.Publishable, SupportsImages: *s.SupportsImages, CreatedAt: past(i, len(fw.SocialAccounts.Items))}
		rec.ID = ids.next(bSocial, i)
		if err := t.insert(bSocial, id, &rec.ID, rec); err != nil {
			return nil, err
		}
		ids.saw(bSocial, i, rec.ID)
		if err := t.step(); err != nil {
			return nil, err
		}
	}
	// A large library is made up a chunk at a time as it is written: its
	// memory does not grow with it.
	n := fw.Assets.Len()
	err := fw.Assets.Range(store.DefaultBatch, func(start int, items []fixtures.LibraryAsset) error {
		for j, la := range items {
			a, err := t.libraryAsset(id, la, projects[la.Project])
			if err != nil {
				return err
			}
			a.CreatedAt = StampOf(now.Add(-time.Duration(n-start-j) * time.Hour))
			a.ID = ids.next(bAssets, start+j)
			if err := t.insertAsset(a); err != nil {
				return err
			}
			ids.saw(bAssets, start+j, a.ID)
			if err := t.step(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ids != nil && !ids.replay {
		ids.keep()
	}
	return ws, nil
}

// libraryAsset builds a completed asset the workspace holds from the start.
func (t *tx) libraryAsset(ws uint64, la fixtures.LibraryAsset, project uint64) (*Asset, error) {
	a := &Asset{WorkspaceID: ws, Status: StatusCompleted, ProjectID: project, Title: la.Title, Prompt: la.Prompt}
	if la.Kind == fixtures.KindUpload {
		a.Kind, a.Source, a.MimeType, a.Width, a.Height = KindImage, SourceUpload, "image/jpeg", 1600, 1200
		a.Media = &Media{}
		return a, nil
	}
	m := t.e.models[la.Model]
	if m == nil {
		return nil, fmt.Errorf("library asset: unknown model %q", la.Model)
	}
	a.Kind, a.Source, a.Model, a.Credits = fixtures.KindOfModel(*m), SourceGeneration, m.ID, int64(m.CreditsPerOutput)
	params := resolved{model: m, aspect: or(la.AspectRatio, m.Defaults.AspectRatio), resolution: or(la.Resolution, m.Defaults.Resolution),
		duration: la.Duration, voice: m.Defaults.Voice, language: m.Defaults.Language, prompt: la.Prompt}
	if params.duration == 0 {
		params.duration = m.Defaults.Duration
	}
	params.fill(a, 0)
	return a, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (t *tx) putToken(tok Token) error {
	if t.b(bTokens).Get([]byte(tok.Token)) != nil {
		return &Error{Kind: ECONFLICT, Code: "token_exists", Message: "That token is already in use."}
	}
	return putJSON(t.b(bTokens), []byte(tok.Token), tok)
}

// insert stores rec under ws|id with the next id of the bucket, written to *id.
func (t *tx) insert(bucket []byte, ws uint64, id *uint64, rec any) error {
	b := t.b(bucket)
	if *id == 0 { // a preset id is a sandbox's starting record's, again
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		*id = seq
	}
	return putJSON(b, key(ws, *id), rec)
}

// listNewest walks a ws-prefixed bucket newest first, starting below the
// cursor (0 for the first page), and returns up to limit records and whether
// more exist.
func listNewest[T any](t *tx, bucket []byte, ws, startingAfter uint64, limit int, keep func(*T) bool) ([]T, bool, error) {
	c := t.b(bucket).Cursor()
	prefix := u64(ws)
	k, v := seekBelow(c, key(ws, startingAfter))
	if startingAfter == 0 {
		k, v = seekBelow(c, key(ws+1, uint64(0)))
	}
	var out []T
	for ; k != nil && hasPrefix(k, prefix); k, v = c.Prev() {
		var rec T
		if err := jsonUnmarshal(v, &rec); err != nil {
			return nil, false, err
		}
		if keep != nil && !keep(&rec) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, rec)
	}
	return out, false, nil
}

func hasPrefix(k, prefix []byte) bool {
	return len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix)
}

// seekBelow positions c on the greatest key below k.
func seekBelow(c *bolt.Cursor, k []byte) ([]byte, []byte) {
	if found, _ := c.Seek(k); found == nil {
		return c.Last()
	}
	return c.Prev()
}

// Page is one page of a list, newest first.
type Page[T any] struct {
	Data    []T
	HasMore bool
}

// NextCursor is the id to send as starting_after for the next page.
func NextCursor[T any](p Page[T], id func(T) uint64) (uint64, bool) {
	if !p.HasMore || len(p.Data) == 0 {
		return 0, false
	}
	return id(p.Data[len(p.Data)-1]), true
}

// BrandKits lists the workspace's brand kits, newest first.
func (e *Engine) BrandKits(p Principal, startingAfter uint64, limit int) (Page[BrandKit], error) {
	return listPage[BrandKit](e, bBrandKits, p.WorkspaceID, startingAfter, limit, nil)
}

// Projects lists the workspace's projects, newest first.
func (e *Engine) Projects(p Principal, startingAfter uint64, limit int) (Page[Project], error) {
	return listPage[Project](e, bProjects, p.WorkspaceID, startingAfter, limit, nil)
}

// Characters lists the workspace's ready characters, newest first.
func (e *Engine) Characters(p Principal) ([]Character, error) {
	pg, err := listPage(e, bCharacters, p.WorkspaceID, 0, 1<<30, func(c *Character) bool { return c.Status == "ready" })
	return pg.Data, err
}

// SocialAccounts lists the workspace's connected accounts, oldest first
// (the order in which "the first connected account of each platform" counts).
func (e *Engine) SocialAccounts(p Principal) ([]SocialAccount, error) {
	var out []SocialAccount
	err := e.view(func(t *tx) error {
		var err error
		out, err = t.socialAccounts(p.WorkspaceID)
		return err
	})
	return out, err
}

func (t *tx) socialAccounts(ws uint64) ([]SocialAccount, error) {
	var out []SocialAccount
	c := t.b(bSocial).Cursor()
	prefix := u64(ws)
	for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
		var s SocialAccount
		if err := jsonUnmarshal(v, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func listPage[T any](e *Engine, bucket []byte, ws, startingAfter uint64, limit int, keep func(*T) bool) (Page[T], error) {
	var pg Page[T]
	err := e.view(func(t *tx) error {
		var err error
		pg.Data, pg.HasMore, err = listNewest(t, bucket, ws, startingAfter, limit, keep)
		return err
	})
	return pg, err
}

// ConnectURL is where social accounts are connected in the app.
func (e *Engine) ConnectURL() string { return e.world.AppURL + "/settings/social-accounts" }

// ProjectURL links a project in the app.
func (e *Engine) ProjectURL(id uint64) string {
	return fmt.Sprintf("%s/projects/%d", e.world.AppURL, id)
}
