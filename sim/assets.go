package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// Index tags of the asset kinds, from the table of modalities in package
// fixtures, which checks that every kind has one; "audio" and "upload" are
// groups a filter asks for. The tags are stored: see fixtures.AssetKind.
var (
	kindTags  = fixtures.KindTags()
	kindOfTag = invert(kindTags)
	// indexTags are the tags an asset of each kind is indexed under: its
	// kind's, then those of the filters that match it (audio, for voice and
	// music).
	indexTags = func() map[string][]byte {
		out := map[string][]byte{}
		for _, k := range fixtures.AssetKinds() {
			out[k.Name] = []byte{k.Tag}
			for _, f := range fixtures.FiltersOf(k.Name) {
				out[k.Name] = append(out[k.Name], f.Tag)
			}
		}
		return out
	}()
)

var statusTags = map[string]byte{StatusQueued: 1, StatusProcessing: 2, StatusCompleted: 3, StatusFailed: 4}

func invert(m map[string]byte) map[byte]string {
	out := make(map[byte]string, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

// tagsOf lists the tags an asset is indexed under: those of its kind, and
// upload's for an upload. It is empty for a kind the table does not know.
func tagsOf(a *Asset) []byte {
	own := indexTags[a.Kind]
	if len(own) == 0 {
		return nil
	}
	tags := append(make([]byte, 0, len(own)+1), own...)
	if a.Source == SourceUpload {
		tags = append(tags, kindTags[fixtures.KindUpload])
	}
	return tags
}

func searchText(a *Asset) []byte {
	// ASCII text (most prompts) is lowered in place, in one allocation;
	// strings.ToLower does the same to it, byte by byte.
	out := make([]byte, 0, len(a.Title)+1+len(a.Prompt))
	out = append(append(append(out, a.Title...), '\n'), a.Prompt...)
	for i, c := range out {
		switch {
		case c >= utf8.RuneSelf:
			return []byte(strings.ToLower(a.Title + "\n" + a.Prompt))
		case 'A' <= c && c <= 'Z':
			out[i] = c + 'a' - 'A'
		}
	}
	return out
}

// insertAsset stores a new asset (taking the next asset id) and its
// owner. Its index entries wait (index.go): a write that leaves its
// workspace indexLag ids past the index's mark writes them at its end; a
// bulk write (a seed) writes them at once, in key order; an asset older
// than the mark (never, but for ids given back) gets them at once too.
func (t *tx) insertAsset(a *Asset) error {
	tags := tagsOf(a)
	if len(tags) == 0 { // before any write: never an asset the kind index misses
		return fmt.Errorf("asset of kind %q: the kind is not in the table of modalities", a.Kind)
	}
	if a.ID == 0 {
		id, err := t.b(bAssets).NextSequence()
		if err != nil {
			return err
		}
		a.ID = id
	}
	ws := a.WorkspaceID
	// One allocation per key (key boxes each id of its parts).
	ok := ownerKey('a', a.ID)
	if err := t.b(bOwners).Put(ok[:], u64(ws)); err != nil {
		return err
	}
	ak := wsKey(ws, a.ID)
	if err := t.b(bAssets).Put(ak[:], encodeAsset(a)); err != nil {
		return err
	}
	if t.bulk != nil {
		ix := t.b(bAssetIndex)
		if err := putIndexEntries(ix, a, tags); err != nil {
			return err
		}
		mk := markKey(ws)
		return ix.Put(mk[:], u64(a.ID))
	}
	if ix := t.b(bAssetIndex); a.ID <= indexedTo(ix, ws) {
		return putIndexEntries(ix, a, tags)
	}
	t.noteFresh(ws, a.ID)
	return nil
}

// updateAsset stores a changed asset; oldStatus keeps the status index
// true (a fresh asset has no entry to move).
func (t *tx) updateAsset(a *Asset, oldStatus string) error {
	if oldStatus != a.Status {
		if ix := t.b(bAssetIndex); a.ID <= indexedTo(ix, a.WorkspaceID) {
			old := statusKey(a.WorkspaceID, oldStatus, a.ID)
			if err := ix.Delete(old[:]); err != nil {
				return err
			}
			k := statusKey(a.WorkspaceID, a.Status, a.ID)
			if err := ix.Put(k[:], nil); err != nil {
				return err
			}
		}
	}
	k := wsKey(a.WorkspaceID, a.ID)
	return t.b(bAssets).Put(k[:], encodeAsset(a))
}

// asset reads an asset of the workspace; other workspaces' ids are not found.
func (t *tx) asset(ws, id uint64) (*Asset, error) {
	k := wsKey(ws, id)
	data := t.b(bAssets).Get(k[:])
	if data == nil {
		return nil, notFound("asset", id)
	}
	var a Asset
	if err := decodeAsset(data, &a); err != nil {
		return nil, fmt.Errorf("asset %d: %w", id, err)
	}
	return &a, nil
}

// AssetQuery filters and pages the library.
type AssetQuery struct {
	Kind          string // image, video, voice, music, audio, model3d, upload
	Status        string
	Query         string // case-insensitive, in titles and prompts
	ProjectID     uint64
	StartingAfter uint64
	Limit         int
}

// ListAssets lists the library newest first. Each filter is an index over
// asset ids; the page is found by leapfrogging the indexes downwards from
// the cursor, so it costs about limit seeks per filter, whatever the size of
// the library, and the reading of the few assets the index has yet to take
// (index.go). A text query is checked against a compact text index.
func (e *Engine) ListAssets(p Principal, q AssetQuery) (Page[Asset], error) {
	_, assets, more, err := e.ListAssetsSkipping(p, q, nil)
	if err != nil {
		return Page[Asset]{}, err
	}
	if assets == nil {
		assets = []Asset{}
	}
	return Page[Asset]{Data: assets, HasMore: more}, nil
}

// ListAssetsSkipping lists like ListAssets, but leaves out of assets (as a
// zero Asset at the same index of ids) those skip says the caller already
// has: a final asset never changes, so its rendering can be kept. When it
// skips them all, assets is nil.
//
// The ids of a page whose assets were all skipped are kept until the next
// write: the same page asked again (a client polling its library) is
// answered without a read transaction while nothing changed. The ids may
// be shared: callers must not change them.
func (e *Engine) ListAssetsSkipping(p Principal, q AssetQuery, skip func(id uint64) bool) (ids []uint64, assets []Asset, hasMore bool, err error) {
	if skip != nil {
		if err := e.settle(); err != nil {
			return nil, nil, false, err
		}
		if ids, more, ok := e.pages.get(p.WorkspaceID, q, e.db.Commits(), skip); ok {
			return ids, nil, more, nil
		}
	}
	// The writes counted before the read: a page kept under that count
	// is never older than the state it was read from.
	commits := e.db.Commits()
	skipped := 0
	err = e.view(func(t *tx) error {
		skipped = 0
		ws := p.WorkspaceID
		upper := uint64(math.MaxUint64 - 1)
		if q.StartingAfter > 0 {
			upper = q.StartingAfter - 1
		}
		var err error
		if ids, err = t.pageIDs(ws, &q, upper, q.Limit+1); err != nil {
			return err
		}
		if len(ids) > q.Limit {
			ids, hasMore = ids[:q.Limit], true
		}
		for i, id := range ids {
			if skip != nil && skip(id) {
				skipped++
				continue
			}
			a, err := t.asset(ws, id)
			if err != nil {
				return err
			}
			if assets == nil { // only when one is read: a page of skipped assets allocates none
				assets = make([]Asset, len(ids))
			}
			assets[i] = *a
		}
		return nil
	})
	if err == nil && skip != nil && skipped == len(ids) {
		e.pages.put(p.WorkspaceID, q, commits, ids, hasMore)
	}
	return ids, assets, hasMore, err
}

// pageCache keeps the ids of recent pages, each with the count of writes
// it was read after.
type pageCache struct {
	mu sync.RWMutex
	m  map[pageKey]keptPage
}

type pageKey struct {
	ws uint64
	q  AssetQuery
}

type keptPage struct {
	commits uint64
	ids     []uint64
	more    bool
}

// maxPages bounds the kept pages; the cache starts again when full.
const maxPages = 1024

// get returns a page kept under the current count of writes whose assets
// the caller all skips.
func (c *pageCache) get(ws uint64, q AssetQuery, commits uint64, skip func(uint64) bool) ([]uint64, bool, bool) {
	c.mu.RLock()
	k, ok := c.m[pageKey{ws, q}]
	c.mu.RUnlock()
	if !ok || k.commits != commits {
		return nil, false, false
	}
	for _, id := range k.ids {
		if !skip(id) {
			return nil, false, false
		}
	}
	return k.ids, k.more, true
}

func (c *pageCache) put(ws uint64, q AssetQuery, commits uint64, ids []uint64, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxPages {
		c.m = make(map[pageKey]keptPage)
	}
	key := pageKey{ws, q}
	if old, ok := c.m[key]; ok && old.commits > commits {
		return // a newer page is kept already
	}
	c.m[key] = keptPage{commits: commits, ids: ids, more: more}
}

// Epoch counts the resets and restores of the state: renderings that hold
// file addresses are valid within one epoch.
func (e *Engine) Epoch() uint64 { return e.epoch.Load() }

// Renders counts what makes a kept rendering of an asset stale: the
// resets and restores of the state (Epoch), and the workspaces restored
// from a snapshot (RestoreWorkspace), whose assets are again as they were.
func (e *Engine) Renders() uint64 { return e.epoch.Load() + e.wsRestores.Load() }

// Commits counts the groups of writes the writer committed since Open: the
// writes per commit are the group commit's batch.
func (e *Engine) Commits() uint64 { return e.db.Commits() }

// idxIter walks the ids under one key prefix downwards.
type idxIter struct {
	c      *bolt.Cursor
	prefix []byte
	match  func(v []byte) bool // optional check of the value
	buf    []byte              // the key being sought
	at     uint64              // the id the cursor rests on, 0 when none
}

func newIter(b *bolt.Bucket, prefix []byte, match func([]byte) bool) *idxIter {
	return &idxIter{c: b.Cursor(), prefix: prefix, match: match}
}

// seekLE returns the greatest id at most x under the prefix.
//
// Asked for the id just below the one it rests on, as a page walking down
// does, it steps back instead of seeking from the root again.
func (it *idxIter) seekLE(x uint64) (uint64, bool) {
	var k, v []byte
	if it.at != 0 && x+1 == it.at {
		k, v = it.c.Prev()
	} else {
		it.buf = binary.BigEndian.AppendUint64(append(it.buf[:0], it.prefix...), x+1)
		k, v = seekBelow(it.c, it.buf)
	}
	for ; k != nil && hasPrefix(k, it.prefix); k, v = it.c.Prev() {
		if it.match == nil || it.match(v) {
			it.at = getU64(k[len(it.prefix):])
			return it.at, true
		}
	}
	it.at = 0
	return 0, false
}

// leapfrog returns up to n ids, descending from upper, present in every iterator.
func leapfrog(iters []*idxIter, upper uint64, n int) []uint64 {
	out := make([]uint64, 0, min(n, 64))
	x := upper
	for len(out) < n && x > 0 {
		for agreed := false; !agreed; {
			agreed = true
			for _, it := range iters {
				y, ok := it.seekLE(x)
				if !ok {
					return out
				}
				if y < x {
					x, agreed = y, false
				}
			}
		}
		out = append(out, x)
		x--
	}
	return out
}

// AssetByID reads an asset of any workspace.
func (e *Engine) AssetByID(id uint64) (Asset, error) {
	var out Asset
	err := e.view(func(t *tx) error {
		a, err := t.asset(t.ownerOf("a", id), id)
		if err == nil {
			out = *a
		}
		return err
	})
	return out, err
}
