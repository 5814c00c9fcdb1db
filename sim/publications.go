package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Publication statuses.
const (
	PubDraft              = "draft"
	PubReady              = "ready"
	PubScheduled          = "scheduled"
	PubPublishing         = "publishing"
	PubPublished          = "published"
	PubPartiallyPublished = "partially_published"
	PubFailed             = "failed"
	PubCancelled          = "cancelled"
)

// Publication is media published, or to be published, to social accounts.
type Publication struct {
	ID          uint64              `json:"id"`
	WorkspaceID uint64              `json:"ws"`
	Status      string              `json:"status"`
	Caption     string              `json:"caption"`
	AssetIDs    []uint64            `json:"asset_ids"`
	MediaType   string              `json:"media_type"` // video or carousel
	Options     *PublicationOptions `json:"options,omitempty"`
	ScheduledAt Stamp               `json:"scheduled_at,omitempty"`
	PublishedAt Stamp               `json:"published_at,omitempty"`
	Deliveries  []Delivery          `json:"deliveries"`
	Due         []byte              `json:"due,omitempty"` // the pending start event
	CreatedAt   Stamp               `json:"created_at"`
}

// PublicationOptions are the platform options of a publication.
type PublicationOptions struct {
	YouTubeFormat string `json:"youtube_format,omitempty"`
	Title         string `json:"title,omitempty"`
}

// Delivery is the publication's delivery to one account.
type Delivery struct {
	SocialAccountID uint64   `json:"social_account_id"`
	Platform        string   `json:"platform"`
	Handle          string   `json:"handle"`
	Status          string   `json:"status"` // scheduled, publishing, published, failed, cancelled
	PostURL         string   `json:"post_url,omitempty"`
	PublishedAt     Stamp    `json:"published_at,omitempty"`
	Error           *Problem `json:"error,omitempty"`
	Fail            bool     `json:"fail,omitempty"`         // decided at creation
	Disconnected    bool     `json:"disconnected,omitempty"` // decided at creation: the account needs reconnecting
	Due             []byte   `json:"due,omitempty"`
}

// PublicationRequest is the body of POST /social/publications.
type PublicationRequest struct {
	AssetIDs         []uint64            `json:"asset_ids"`
	Caption          string              `json:"caption"`
	SocialAccountIDs []uint64            `json:"social_account_ids,omitempty"`
	Platforms        []string            `json:"platforms,omitempty"`
	ScheduledAt      *time.Time          `json:"scheduled_at,omitempty"`
	Options          *PublicationOptions `json:"options,omitempty"`
}

// MaxScheduleAhead is how far ahead a publication may be scheduled.
const MaxScheduleAhead = 365 * 24 * time.Hour

// How long a platform takes to take a post, before jitter and speed.
var deliverySeconds = map[string]float64{"tiktok": 6, "instagram": 4, "youtube": 12, "facebook": 3, "x": 2, "linkedin": 3, "pinterest": 3, "threads": 2}

// CreatePublication publishes completed media now or at a scheduled time.
func (e *Engine) CreatePublication(p Principal, req PublicationRequest) (Publication, error) {
	if err := checkPublicationShape(req).Err(); err != nil {
		return Publication{}, err
	}
	var out Publication
	err := e.update(func(t *tx) error {
		ws, err := t.workspace(p.WorkspaceID)
		if err != nil {
			return err
		}
		if !ws.PublishingAllowed {
			return &Error{Kind: EFORBIDDEN, Code: "publishing_not_allowed",
				Message: fmt.Sprintf("The %s plan does not include social publishing; upgrade the plan in the app.", ws.Plan),
				Details: map[string]any{"plan": ws.Plan}}
		}
		var v Violations
		images, videos := 0, 0
		for i, id := range req.AssetIDs {
			field := fmt.Sprintf("asset_ids[%d]", i)
			a, err := t.asset(ws.ID, id)
			switch {
			case err != nil:
				v.Add(field, "asset %d not found in this workspace", id)
			case a.Status != StatusCompleted:
				v.Add(field, "asset %d is %s, not completed", id, a.Status)
			case a.Kind == KindImage:
				images++
			case a.Kind == KindVideo:
				videos++
			default:
				v.Add(field, "asset %d is a %s; only images and videos can be published", id, a.Kind)
			}
		}
		switch {
		case videos > 0 && images > 0:
			v.Add("asset_ids", "send one video, or 1 to 10 images as a carousel, not a mix (got %d videos and %d images)", videos, images)
		case videos > 1:
			v.Add("asset_ids", "only one video can be published at a time (got %d)", videos)
		}
		accounts, err := t.socialAccounts(ws.ID)
		if err != nil {
			return err
		}
		targets := t.targets(&v, accounts, req, images > 0)
		switch {
		case req.ScheduledAt == nil:
		case !req.ScheduledAt.After(t.now):
			v.Add("scheduled_at", "must be in the future (now is %s)", FormatTime(t.now))
		case req.ScheduledAt.After(t.now.Add(MaxScheduleAhead)):
			v.Add("scheduled_at", "must be at most %d days ahead (now is %s)", int(MaxScheduleAhead.Hours()/24), FormatTime(t.now))
		}
		if err := v.Err(); err != nil {
			return err
		}
		// Every check passed: from here on, write.
		pub := &Publication{WorkspaceID: ws.ID, Caption: req.Caption, AssetIDs: req.AssetIDs, MediaType: "carousel",
			Options: req.Options, CreatedAt: StampOf(t.now)}
		if videos == 1 {
			pub.MediaType = "video"
		}
		if pub.ID, err = t.b(bPubs).NextSequence(); err != nil {
			return err
		}
		magic := ParseMagic(req.Caption)
		for _, a := range targets {
			d := Delivery{SocialAccountID: a.ID, Platform: a.Platform, Handle: a.Handle,
				Disconnected: t.accountDisconnected(p.WorkspaceID, magic.Disconnected, a)}
			d.Fail = !d.Disconnected && t.platformFails(p.WorkspaceID, magic.FailPlatforms, a.Platform)
			pub.Deliveries = append(pub.Deliveries, d)
		}
		if req.ScheduledAt != nil {
			pub.ScheduledAt = StampOf(req.ScheduledAt.UTC())
			pub.Status = PubScheduled
			for i := range pub.Deliveries {
				pub.Deliveries[i].Status = PubScheduled
			}
			if pub.Due, err = t.schedule(req.ScheduledAt.UTC(), Event{Kind: EventPubStart, ID: pub.ID}); err != nil {
				return err
			}
			out = *pub
			return t.putPublication(pub, "")
		}
		t.note(pub.WorkspaceID, "publication_now")
		if err := t.startPublication(pub, ""); err != nil {
			return err
		}
		out = *pub
		return nil
	})
	return out, err
}

// targets resolves the request's accounts and checks each can take the post.
func (t *tx) targets(v *Violations, accounts []SocialAccount, req PublicationRequest, images bool) []SocialAccount {
	var out []SocialAccount
	check := func(field string, a SocialAccount) {
		switch {
		case !a.Publishable:
			v.Add(field, "account %d (%s on %s) cannot publish: reconnect it in the app", a.ID, a.Handle, a.Platform)
		case images && !a.SupportsImages:
			v.Add(field, "account %d (%s on %s) does not take images", a.ID, a.Handle, a.Platform)
		default:
			out = append(out, a)
		}
	}
	for i, id := range req.SocialAccountIDs {
		field := fmt.Sprintf("social_account_ids[%d]", i)
		j := slices.IndexFunc(accounts, func(a SocialAccount) bool { return a.ID == id })
		if j < 0 {
			v.Add(field, "social account %d is not connected to this workspace", id)
			continue
		}
		check(field, accounts[j])
	}
	for i, platform := range req.Platforms {
		field := fmt.Sprintf("platforms[%d]", i)
		j := slices.IndexFunc(accounts, func(a SocialAccount) bool { return a.Platform == platform })
		if j < 0 {
			v.Add(field, "no %s account is connected to this workspace", platform)
			continue
		}
		check(field, accounts[j])
	}
	return out
}

// platformFails reports whether a delivery to platform fails: the
// caption's markers ask for it, or a fault rule does (Fates.PlatformFails).
func (t *tx) platformFails(ws uint64, magic []string, platform string) bool {
	for _, p := range magic {
		if p == "all" || p == platform {
			return true
		}
	}
	return t.e.fates.PlatformFails(ws, platform)
}

// accountDisconnected reports whether a delivery to account finds it
// disconnected: the caption's markers name it (by id or platform), or a
// fault rule does (Fates.AccountDisconnected).
func (t *tx) accountDisconnected(ws uint64, magic []string, a SocialAccount) bool {
	for _, m := range magic {
		if m == a.Platform || m == strconv.FormatUint(a.ID, 10) {
			return true
		}
	}
	return t.e.fates.AccountDisconnected(ws, a.ID, a.Platform)
}

// disconnect marks a social account as needing reconnection in the app:
// it reads publishable false from now on.
func (t *tx) disconnect(ws, id uint64) error {
	var a SocialAccount
	ok, err := getJSON(t.b(bSocial), key(ws, id), &a)
	if err != nil || !ok || !a.Publishable {
		return err
	}
	a.Publishable = false
	t.note(ws, "social_account_disconnected")
	return putJSON(t.b(bSocial), key(ws, id), &a)
}

// startPublication begins delivering to every target.
func (t *tx) startPublication(pub *Publication, oldStatus string) error {
	pub.Status, pub.Due = PubPublishing, nil
	for i := range pub.Deliveries {
		d := &pub.Deliveries[i]
		if d.Status == PubCancelled {
			continue
		}
		d.Status = PubPublishing
		rng := Rand(t.e.seed, "delivery", pub.ID*64+uint64(i))
		secs := deliverySeconds[d.Platform] * (0.8 + 0.4*rng.Float64()) / t.e.speed
		k, err := t.schedule(t.now.Add(time.Duration(secs*float64(time.Second)).Round(time.Millisecond)), Event{Kind: EventPubDeliver, ID: pub.ID, Sub: i})
		if err != nil {
			return err
		}
		d.Due = k
	}
	return t.putPublication(pub, oldStatus)
}

// stepPublication applies a publication's due event.
func (t *tx) stepPublication(ev Event) error {
	pub, err := t.publication(t.ownerOf("p", ev.ID), ev.ID)
	if err != nil {
		return err
	}
	old := pub.Status
	if ev.Kind == EventPubStart {
		if pub.Status != PubScheduled {
			return nil
		}
		t.note(pub.WorkspaceID, "scheduled_publication_started")
		return t.startPublication(pub, old)
	}
	if ev.Sub >= len(pub.Deliveries) {
		return nil
	}
	d := &pub.Deliveries[ev.Sub]
	if d.Status != PubPublishing {
		return nil
	}
	d.Due = nil
	switch {
	case d.Disconnected:
		d.Status = PubFailed
		d.Error = &Problem{Code: CodeAccountDisconnected,
			Message: fmt.Sprintf("The %s account %s is disconnected; reconnect it in the app.", platformName(d.Platform), d.Handle)}
		if err := t.disconnect(pub.WorkspaceID, d.SocialAccountID); err != nil {
			return err
		}
	case d.Fail:
		d.Status = PubFailed
		d.Error = &Problem{Code: "platform_rejected", Message: fmt.Sprintf("%s rejected the post.", platformName(d.Platform))}
	default:
		d.Status, d.PublishedAt, d.PostURL = PubPublished, StampOf(t.now), t.e.postURL(d, pub.ID, ev.Sub, pub.MediaType)
	}
	pub.Status = overall(pub.Deliveries)
	if pub.Status == PubPublished || pub.Status == PubPartiallyPublished {
		pub.PublishedAt = StampOf(t.now)
	}
	if pub.Status != PubPublishing {
		t.note(pub.WorkspaceID, "publication_"+pub.Status)
	}
	return t.putPublication(pub, old)
}

// overall is a publication's status from its deliveries.
func overall(ds []Delivery) string {
	counts := map[string]int{}
	for _, d := range ds {
		counts[d.Status]++
	}
	switch {
	case counts[PubPublishing] > 0:
		return PubPublishing
	case counts[PubScheduled] > 0:
		return PubScheduled
	case counts[PubPublished] == len(ds):
		return PubPublished
	case counts[PubPublished] > 0:
		return PubPartiallyPublished
	case counts[PubCancelled] == len(ds) || (counts[PubCancelled] > 0 && counts[PubFailed] == 0):
		return PubCancelled
	default:
		return PubFailed
	}
}

func platformName(p string) string {
	names := map[string]string{"tiktok": "TikTok", "instagram": "Instagram", "youtube": "YouTube", "facebook": "Facebook",
		"x": "X", "linkedin": "LinkedIn", "pinterest": "Pinterest", "threads": "Threads"}
	if n, ok := names[p]; ok {
		return n
	}
	return p
}

// postURL is the address of a delivered post, in the platform's style
// (its path) but on a host below example.com: a made-up post must not
// lead to a real network, where its id may be someone's post.
func (e *Engine) postURL(d *Delivery, pubID uint64, i int, mediaType string) string {
	n := Rand(e.seed, "post", pubID*64+uint64(i)).Uint64()
	id := fmt.Sprintf("%d", 7_000_000_000_000_000_000+n%1_000_000_000_000_000_000)
	code := strings.ToUpper(fmt.Sprintf("%011x", n))[:11]
	h := strings.TrimPrefix(d.Handle, "@")
	switch d.Platform {
	case "tiktok":
		if mediaType == "video" {
			return "https://tiktok.example.com/@" + h + "/video/" + id[:19]
		}
		return "https://tiktok.example.com/@" + h + "/photo/" + id[:19]
	case "instagram":
		return "https://instagram.example.com/p/" + code + "/"
	case "youtube":
		return "https://youtube.example.com/shorts/" + code
	case "facebook":
		return "https://facebook.example.com/" + h + "/posts/" + id[:16]
	case "x":
		return "https://x.example.com/" + h + "/status/" + id[:19]
	case "linkedin":
		return "https://linkedin.example.com/feed/update/urn:li:activity:" + id[:19] + "/"
	case "pinterest":
		return "https://pinterest.example.com/pin/" + id[:18] + "/"
	default:
		return "https://threads.example.com/@" + h + "/post/" + code
	}
}

func (t *tx) publication(ws, id uint64) (*Publication, error) {
	var pub Publication
	ok, err := getJSON(t.b(bPubs), key(ws, id), &pub)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("publication", id)
	}
	return &pub, nil
}

// putPublication stores a publication and keeps its status index true.
func (t *tx) putPublication(pub *Publication, oldStatus string) error {
	if oldStatus != pub.Status {
		if oldStatus != "" {
			if err := t.b(bPubStatus).Delete(key(pub.WorkspaceID, oldStatus, "/", pub.ID)); err != nil {
				return err
			}
		}
		if err := t.b(bPubStatus).Put(key(pub.WorkspaceID, pub.Status, "/", pub.ID), nil); err != nil {
			return err
		}
	}
	if err := t.b(bOwners).Put(key("p", pub.ID), u64(pub.WorkspaceID)); err != nil {
		return err
	}
	t.publicationChanged(pub)
	return putJSON(t.b(bPubs), key(pub.WorkspaceID, pub.ID), pub)
}

// Publication reads one publication.
func (e *Engine) Publication(p Principal, id uint64) (Publication, error) {
	var out Publication
	err := e.view(func(t *tx) error {
		pub, err := t.publication(p.WorkspaceID, id)
		if err == nil {
			out = *pub
		}
		return err
	})
	return out, err
}

// Publications lists publications newest first, optionally of one status.
func (e *Engine) Publications(p Principal, status string, startingAfter uint64, limit int) (Page[Publication], error) {
	var pg Page[Publication]
	err := e.view(func(t *tx) error {
		var iter *idxIter
		if status != "" {
			iter = newIter(t.b(bPubStatus), key(p.WorkspaceID, status, "/"), nil)
		} else {
			iter = newIter(t.b(bPubs), key(p.WorkspaceID), nil)
		}
		upper := ^uint64(0) - 1
		if startingAfter > 0 {
			upper = startingAfter - 1
		}
		ids := leapfrog([]*idxIter{iter}, upper, limit+1)
		if len(ids) > limit {
			ids, pg.HasMore = ids[:limit], true
		}
		for _, id := range ids {
			pub, err := t.publication(p.WorkspaceID, id)
			if err != nil {
				return err
			}
			pg.Data = append(pg.Data, *pub)
		}
		return nil
	})
	return pg, err
}

// CancelPublication cancels what has not been delivered yet: a scheduled
// publication entirely, a publishing one for its pending deliveries.
func (e *Engine) CancelPublication(ws, id uint64) (Publication, error) {
	var out Publication
	err := e.update(func(t *tx) error {
		pub, err := t.publication(ws, id)
		if err != nil {
			return err
		}
		if pub.Status != PubScheduled && pub.Status != PubPublishing && pub.Status != PubDraft && pub.Status != PubReady {
			return &Error{Kind: ECONFLICT, Code: "not_cancellable", Message: fmt.Sprintf("Publication %d is %s; only a draft, ready, scheduled or publishing one can be cancelled.", id, pub.Status)}
		}
		old := pub.Status
		if err := t.unschedule(pub.Due); err != nil {
			return err
		}
		pub.Due = nil
		for i := range pub.Deliveries {
			d := &pub.Deliveries[i]
			if d.Status == PubScheduled || d.Status == PubPublishing || d.Status == "" {
				if err := t.unschedule(d.Due); err != nil {
					return err
				}
				d.Status, d.Due = PubCancelled, nil
			}
		}
		pub.Status = overall(pub.Deliveries)
		if len(pub.Deliveries) == 0 {
			pub.Status = PubCancelled
		}
		t.note(pub.WorkspaceID, "publication_cancelled")
		out = *pub
		return t.putPublication(pub, old)
	})
	return out, err
}

// CancelPublicationAny cancels a publication of any workspace.
func (e *Engine) CancelPublicationAny(id uint64) (Publication, error) {
	var ws uint64
	if err := e.read(func(btx *bolt.Tx) error {
		ws = e.newTx(btx).ownerOf("p", id)
		return nil
	}); err != nil {
		return Publication{}, err
	}
	return e.CancelPublication(ws, id)
}

// Limits of a publication request.
const (
	MaxPublicationAssets = 10
	MaxCaption           = 2200
	MaxPublicationTitle  = 100
)

// checkPublicationShape holds the rules of openapi.json that need no state,
// for callers that skip the HTTP edge (the Go API, the MCP front).
func checkPublicationShape(req PublicationRequest) Violations {
	var v Violations
	switch n := len(req.AssetIDs); {
	case n == 0:
		v.Add("asset_ids", "at least one asset is required")
	case n > MaxPublicationAssets:
		v.Add("asset_ids", "at most %d assets (a carousel of images), got %d", MaxPublicationAssets, n)
	}
	if n := utf8.RuneCountInString(req.Caption); n > MaxCaption {
		v.Add("caption", "at most %d characters, hashtags included, got %d", MaxCaption, n)
	}
	switch {
	case len(req.SocialAccountIDs) > 0 && len(req.Platforms) > 0:
		v.Add("social_account_ids", "send social_account_ids or platforms, not both")
	case len(req.SocialAccountIDs) == 0 && len(req.Platforms) == 0:
		v.Add("social_account_ids", "send social_account_ids or platforms: the accounts to publish to")
	}
	if o := req.Options; o != nil {
		if o.YouTubeFormat != "" && o.YouTubeFormat != "short" && o.YouTubeFormat != "video" {
			v.AddAllowed("options.youtube_format", []any{"short", "video"}, "unknown format %q", o.YouTubeFormat)
		}
		if n := utf8.RuneCountInString(o.Title); n > MaxPublicationTitle {
			v.Add("options.title", "at most %d characters, got %d", MaxPublicationTitle, n)
		}
	}
	return v
}
