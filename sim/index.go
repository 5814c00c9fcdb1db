package sim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
)

// The library's index (schema 3): one bucket, asset_index, holds what every
// filter of a list page walks, keyed by the workspace first, then a class:
//
//	ws|'k'|tag|id      -> ""    a kind (or a group: audio, upload) the asset is listed under
//	ws|'p'|project|id  -> ""    its project
//	ws|'s'|status|id   -> ""    its status
//	ws|'t'|id          -> text  its title and prompt, lower-case, for a text query
//	ws|'w'             -> id    the workspace's newest asset whose entries are written
//
// An asset newer than its workspace's 'w' (a fresh one) has no entries
// yet: a walk reads its facts from its record, which its creation writes
// anyway, and a write that leaves a workspace indexLag or more ids past its
// 'w' writes the entries of all of them, at the end of its transaction
// (tx.indexFresh). A creation group thus writes the asset records, in the
// pages at the end of the workspace's range, and no page of the index: the
// entries of indexLag assets go at once, a few pages at the tails of their
// ranges. Before, each asset put an entry in four buckets (kind, status,
// text, and project), about 20 pages a group, which bbolt wrote whole at
// each commit. A fresh asset's status changes rewrite only its record.
//
// A walk of a filtered page reads the fresh assets newest first from their
// records (at most about indexLag of them, in the workspace's range of the
// assets bucket), then leapfrogs the index's ranges below 'w' (leapfrog).
// Entries of ids past 'w' are never read, so a 'w' written is all that
// makes entries count.
var bAssetIndex = []byte("asset_index")

// The classes of asset_index's keys, the byte after the workspace.
const (
	ixKind    = 'k'
	ixProject = 'p'
	ixStatus  = 's'
	ixText    = 't'
	ixMark    = 'w'
)

// indexLag is how many ids past its mark a workspace's assets may run
// before their entries are written: a page filtered by kind, status,
// project or text reads at most about this many records besides the
// index, and the index takes a write every indexLag creations.
const indexLag = 64

// markKey is ws|'w', the key of the workspace's mark.
func markKey(ws uint64) [9]byte {
	var k [9]byte
	binary.BigEndian.PutUint64(k[:8], ws)
	k[8] = ixMark
	return k
}

// indexedTo is the workspace's mark: every asset of it with an id up to
// the mark has its entries; 0 when none has.
func indexedTo(ix *bolt.Bucket, ws uint64) uint64 {
	k := markKey(ws)
	if v := ix.Get(k[:]); len(v) == 8 {
		return getU64(v)
	}
	return 0
}

// indexEntries calls put with the key and value of every entry of asset
// a, whose tags are tags (tagsOf). The key is valid until the next call.
func indexEntries(a *Asset, tags []byte, put func(k, v []byte) error) error {
	var k [25]byte
	binary.BigEndian.PutUint64(k[:8], a.WorkspaceID)
	k[8] = ixKind
	binary.BigEndian.PutUint64(k[10:18], a.ID)
	for _, tag := range tags {
		k[9] = tag
		if err := put(k[:18], nil); err != nil {
			return err
		}
	}
	k[8], k[9] = ixStatus, statusTags[a.Status]
	if err := put(k[:18], nil); err != nil {
		return err
	}
	if a.ProjectID != 0 {
		k[8] = ixProject
		binary.BigEndian.PutUint64(k[9:17], a.ProjectID)
		binary.BigEndian.PutUint64(k[17:25], a.ID)
		if err := put(k[:25], nil); err != nil {
			return err
		}
	}
	k[8] = ixText
	binary.BigEndian.PutUint64(k[9:17], a.ID)
	return put(k[:17], searchText(a))
}

// putIndexEntries writes the entries of asset a (its mark aside).
func putIndexEntries(ix *bolt.Bucket, a *Asset, tags []byte) error {
	return indexEntries(a, tags, func(k, v []byte) error { return ix.Put(k, v) })
}

// statusKey is ws|'s'|status|id.
func statusKey(ws uint64, status string, id uint64) [18]byte {
	var k [18]byte
	binary.BigEndian.PutUint64(k[:8], ws)
	k[8], k[9] = ixStatus, statusTags[status]
	binary.BigEndian.PutUint64(k[10:], id)
	return k
}

// freshWorkspace is a workspace a transaction inserted assets of, and the
// newest of them.
type freshWorkspace struct{ ws, newest uint64 }

// noteFresh notes a fresh asset inserted, for indexFresh.
func (t *tx) noteFresh(ws, id uint64) {
	for i := range t.fresh {
		if t.fresh[i].ws == ws {
			t.fresh[i].newest = max(t.fresh[i].newest, id)
			return
		}
	}
	t.fresh = append(t.fresh, freshWorkspace{ws, id})
}

// indexFresh writes the entries of the fresh assets of every workspace
// this transaction left indexLag or more ids past its mark.
func (t *tx) indexFresh() error {
	for _, f := range t.fresh {
		ix := t.b(bAssetIndex)
		if w := indexedTo(ix, f.ws); f.newest >= w+indexLag {
			if err := t.indexFrom(ix, f.ws, w); err != nil {
				return err
			}
		}
	}
	t.fresh = t.fresh[:0]
	return nil
}

// indexFrom writes the entries of the assets of workspace ws past mark w,
// oldest first (at the tails of their ranges), and moves the mark to the
// newest.
func (t *tx) indexFrom(ix *bolt.Bucket, ws, w uint64) error {
	c := t.b(bAssets).Cursor()
	from := wsKey(ws, w+1)
	last := w
	var a Asset
	for k, v := c.Seek(from[:]); k != nil && len(k) == 16 && getU64(k) == ws; k, v = c.Next() {
		if err := decodeAsset(v, &a); err != nil {
			return fmt.Errorf("asset %d: %w", getU64(k[8:]), err)
		}
		if err := putIndexEntries(ix, &a, tagsOf(&a)); err != nil {
			return err
		}
		last = a.ID
	}
	if last == w {
		return nil
	}
	mk := markKey(ws)
	return ix.Put(mk[:], u64(last))
}

// pageIDs are up to n ids of workspace ws's assets that q's filters match,
// newest first, from upper down.
func (t *tx) pageIDs(ws uint64, q *AssetQuery, upper uint64, n int) ([]uint64, error) {
	if q.ProjectID == 0 && q.Kind == "" && q.Status == "" && q.Query == "" {
		return leapfrog([]*idxIter{newIter(t.b(bAssets), key(ws), nil)}, upper, n), nil
	}
	m := assetMatch{project: q.ProjectID, status: q.Status}
	if q.Kind != "" {
		tag, ok := kindTags[q.Kind]
		if !ok {
			return nil, nil // no asset is of a kind the table does not know
		}
		m.kind = tag
	}
	if q.Query != "" {
		m.needle = []byte(strings.ToLower(q.Query))
	}
	ix := t.b(bAssetIndex)
	w := indexedTo(ix, ws)
	var out []uint64
	if upper > w {
		var err error
		if out, err = t.freshIDs(ws, w, upper, &m, n); err != nil || len(out) == n {
			return out, err
		}
		upper = w
	}
	var iters []*idxIter
	if m.project != 0 {
		iters = append(iters, newIter(ix, key(ws, byte(ixProject), m.project), nil))
	}
	if m.kind != 0 {
		iters = append(iters, newIter(ix, key(ws, byte(ixKind), m.kind), nil))
	}
	if m.status != "" {
		iters = append(iters, newIter(ix, key(ws, byte(ixStatus), statusTags[m.status]), nil))
	}
	if m.needle != nil {
		needle := m.needle
		iters = append(iters, newIter(ix, key(ws, byte(ixText)), func(v []byte) bool { return bytes.Contains(v, needle) }))
	}
	return append(out, leapfrog(iters, upper, n-len(out))...), nil
}

// freshIDs are up to n ids of ws's fresh assets (past mark w) at most
// upper that m matches, newest first, read from their records.
func (t *tx) freshIDs(ws, w, upper uint64, m *assetMatch, n int) ([]uint64, error) {
	var out []uint64
	c := t.b(bAssets).Cursor()
	top := wsKey(ws, upper+1)
	for k, v := seekBelow(c, top[:]); k != nil && len(k) == 16 && getU64(k) == ws; k, v = c.Prev() {
		id := getU64(k[8:])
		if id <= w {
			break
		}
		ok, err := m.matches(v)
		if err != nil {
			return nil, fmt.Errorf("asset %d: %w", id, err)
		}
		if ok {
			if out = append(out, id); len(out) == n {
				break
			}
		}
	}
	return out, nil
}

// assetMatch is the filters of a page, held against an asset's record as
// the index would hold them: the kind's tag (0: any), the status, the
// project (0: any), the lower-case text (nil: any).
type assetMatch struct {
	kind    byte
	status  string
	project uint64
	needle  []byte
	text    []byte // scratch
}

// matches reads the facts of an asset record (codec.go's encoding)
// without copying its strings, and reports whether every filter holds.
func (m *assetMatch) matches(data []byte) (bool, error) {
	d := store.NewDecoder(data)
	if v := d.Byte(); v != assetCodecVersion {
		return false, fmt.Errorf("asset record version %d, want %d", v, assetCodecVersion)
	}
	d.Uvarint() // id
	d.Uvarint() // workspace
	d.Uvarint() // job
	project := d.Uvarint()
	source, kind, status := d.Bytes(), d.Bytes(), d.Bytes()
	d.Bytes() // model
	title, prompt := d.Bytes(), d.Bytes()
	if err := d.Err(); err != nil {
		return false, fmt.Errorf("asset record: %w", err)
	}
	switch {
	case m.project != 0 && project != m.project:
		return false, nil
	case m.status != "" && string(status) != m.status:
		return false, nil
	case m.kind != 0 && !hasTag(kind, source, m.kind):
		return false, nil
	case m.needle != nil:
		m.text = lowerText(m.text[:0], title, prompt)
		return bytes.Contains(m.text, m.needle), nil
	}
	return true, nil
}

// hasTag reports whether an asset of kind and source is indexed under tag
// (tagsOf).
func hasTag(kind, source []byte, tag byte) bool {
	if bytes.IndexByte(indexTags[string(kind)], tag) >= 0 {
		return true
	}
	return string(source) == SourceUpload && tag == kindTags[fixtures.KindUpload]
}

// lowerText appends what searchText makes of a title and a prompt to out.
func lowerText(out, title, prompt []byte) []byte {
	start := len(out)
	out = append(append(append(out, title...), '\n'), prompt...)
	for i, c := range out[start:] {
		switch {
		case c >= utf8.RuneSelf:
			return append(out[:start], strings.ToLower(string(title)+"\n"+string(prompt))...)
		case 'A' <= c && c <= 'Z':
			out[start+i] = c + 'a' - 'A'
		}
	}
	return out
}
