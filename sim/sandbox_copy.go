package sim

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// A sandbox made from a workspace with a large library copies the library
// in batches, before the write that creates the sandbox, each batch an
// ordinary write of the group-commit writer: other workspaces' writes go
// in between (in the same groups or the next), and no transaction grows
// with the library (bbolt splits nodes only at commit, so one transaction
// of 200,000 assets copied ever-growing nodes: minutes, every other write
// waiting behind it).
//
// Nothing of the copy is reachable until the last write: its records sit
// under a workspace id reserved by the first batch, with no workspace
// record, key or sandbox. The first batch also writes its projects (the
// assets point at them), reserves the asset ids (a range: the same ids
// whatever writes come between, so that a reset gives them again) and
// leaves a marker in meta; the write that creates the sandbox adopts the
// copy and removes the marker. A copy that fails is removed in batches; one
// that a stop cut short (the marker left) is removed at the next Open; one
// that a reset or restore of the whole state wiped (the marker gone) fails
// and leaves nothing to remove.

// MaxSandboxLibrary is the largest library a sandbox may be created with:
// a sandbox from a larger fixture workspace is refused (409
// library_too_large) unless it asks for an empty library. At about 20 µs
// an asset, the copy of the largest takes about 20 s, well within the
// server's write timeout (90 s by default).
const MaxSandboxLibrary = 1_000_000

// copyBatch is how many library assets one batch of a sandbox's copy
// writes: a batch holds the writer for a few milliseconds.
const copyBatch = 1024

// keyCopying prefixes the markers of the copies under way, in meta:
// copying|<workspace id>.
var keyCopying = []byte("copying")

// libraryCopy is a library copied for a sandbox, waiting for the write
// that creates the sandbox to adopt it.
type libraryCopy struct {
	ws       uint64 // the workspace id reserved
	created  Stamp  // when the workspace is created: the records are dated from it
	projects uint64 // the first project id (0: none)
	nproj    int
	assets   uint64 // the first asset id
	n        int
}

func copyMarker(ws uint64) []byte { return key(string(keyCopying), ws) }

// errCopyWiped is the failure of a copy whose state was replaced (a reset
// or restore of the whole state) while it ran.
var errCopyWiped = &Error{Kind: ECONFLICT, Code: "state_replaced",
	Message: "The server's state was reset or restored while the sandbox's library was copied; create the sandbox again."}

// copyFirst copies fw's library before the sandbox is created, if it is
// large; nil if it is not. It refuses a library larger than
// MaxSandboxLibrary, and a sandbox past the limit of max before it copies.
func (e *Engine) copyFirst(fw fixtures.Workspace, max int) (*libraryCopy, error) {
	n := fw.Assets.Len()
	if limit := e.cfg.copyLimit; n > limit {
		return nil, &Error{Kind: ECONFLICT, Code: "library_too_large",
			Message: fmt.Sprintf("The fixture workspace %q holds %d library assets; a sandbox starts with at most %d. Create it with \"empty_library\": true, or from a smaller fixture workspace.", fw.Name, n, limit),
			Details: map[string]any{"limit": limit, "assets": n, "from": fw.Name}}
	}
	if n <= e.cfg.copyBatch {
		return nil, nil
	}
	var count uint64
	if err := e.view(func(t *tx) error {
		if v := t.b(bMeta).Get(keySandboxCount); len(v) == 8 {
			count = getU64(v)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if count >= uint64(max) {
		return nil, nil // refused by the write that creates it, before a copy
	}
	return e.copyLibrary(fw)
}

// copyLibrary copies fw's projects and library for a sandbox, in batches.
func (e *Engine) copyLibrary(fw fixtures.Workspace) (*libraryCopy, error) {
	c := &libraryCopy{n: fw.Assets.Len(), nproj: len(fw.Projects.Items)}
	projects := map[string]uint64{}
	err := e.update(func(t *tx) error {
		ws, err := t.b(bWorkspaces).NextSequence()
		if err != nil {
			return err
		}
		c.ws, c.created = ws, StampOf(t.now)
		now := c.created.Time()
		clear(projects)
		c.projects = 0
		for i, p := range fw.Projects.Items {
			rec := &Project{WorkspaceID: ws, Name: p.Name, Status: p.Status,
				CreatedAt: StampOf(now.Add(-time.Duration(c.nproj-i) * 24 * time.Hour))}
			if err := t.insert(bProjects, ws, &rec.ID, rec); err != nil {
				return err
			}
			if i == 0 {
				c.projects = rec.ID
			}
			projects[p.Name] = rec.ID
		}
		b := t.b(bAssets)
		c.assets = b.Sequence() + 1
		if err := b.SetSequence(b.Sequence() + uint64(c.n)); err != nil {
			return err
		}
		return t.b(bMeta).Put(copyMarker(ws), nil)
	})
	if err != nil {
		return nil, err
	}
	if e.onCopyBatch != nil {
		e.onCopyBatch(0, c.n)
	}
	now := c.created.Time()
	err = fw.Assets.Range(e.cfg.copyBatch, func(start int, items []fixtures.LibraryAsset) error {
		err := e.update(func(t *tx) error {
			if t.b(bMeta).Get(copyMarker(c.ws)) == nil {
				return errCopyWiped
			}
			for j, la := range items {
				a, err := t.libraryAsset(c.ws, la, projects[la.Project])
				if err != nil {
					return err
				}
				i := start + j
				a.CreatedAt = StampOf(now.Add(-time.Duration(c.n-i) * time.Hour))
				a.ID = c.assets + uint64(i)
				if err := t.insertAsset(a); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil && e.onCopyBatch != nil {
			e.onCopyBatch(start+len(items), c.n)
		}
		return err
	})
	if err != nil {
		_ = e.dropCopy(c.ws, e.update) // logged
		return nil, err
	}
	return c, nil
}

// adopt makes the copy the library of the workspace that addWorkspaceWith
// is creating: fw loses the projects and library already written, ids
// records theirs. It fails if the state was replaced since the copy began.
func (c *libraryCopy) adopt(t *tx, fw *fixtures.Workspace, ids *StartIDs) error {
	if t.b(bMeta).Get(copyMarker(c.ws)) == nil {
		return errCopyWiped
	}
	if err := t.b(bMeta).Delete(copyMarker(c.ws)); err != nil {
		return err
	}
	fw.Projects, fw.Assets = fixtures.Many[fixtures.Project]{}, fixtures.Many[fixtures.LibraryAsset]{}
	if c.nproj > 0 {
		ids.ran(bProjects, c.projects, c.nproj)
	}
	if c.n > 0 {
		ids.ran(bAssets, c.assets, c.n)
	}
	return nil
}

// has reports whether the ids of bucket's records are kept.
func (s *StartIDs) has(bucket []byte) bool {
	_, ok := s.First[string(bucket)]
	return ok
}

// ran records that n records of bucket were given the ids from first on.
func (s *StartIDs) ran(bucket []byte, first uint64, n int) {
	if s == nil || s.replay {
		return
	}
	if s.First == nil {
		s.First, s.count, s.last = map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	}
	b := string(bucket)
	s.First[b], s.count[b], s.last[b] = first, uint64(n), first+uint64(n-1)
}

// copied buckets are those a copy writes, keyed by the workspace first.
var copied = [][]byte{bAssets, bAssetIndex, bProjects}

// dropCopy removes the records of an unfinished copy, 4 copyBatch keys per
// write (run: Engine.update at run time, a direct transaction at Open).
// Without its marker (the state was replaced since) it removes nothing.
func (e *Engine) dropCopy(ws uint64, run func(func(*tx) error) error) error {
	for done := false; !done; {
		err := run(func(t *tx) error {
			done = false
			meta := t.b(bMeta)
			if meta.Get(copyMarker(ws)) == nil {
				done = true
				return nil
			}
			budget := 4 * e.cfg.copyBatch
			for _, name := range copied {
				b := t.b(name)
				var keys, owners [][]byte
				c := b.Cursor()
				prefix := u64(ws)
				for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix) && len(keys) < budget; k, _ = c.Next() {
					keys = append(keys, bytes.Clone(k))
					if string(name) == string(bAssets) {
						owners = append(owners, key("a", getU64(k[8:16])))
					}
				}
				for _, k := range keys {
					if err := b.Delete(k); err != nil {
						return err
					}
				}
				for _, k := range owners {
					if err := t.b(bOwners).Delete(k); err != nil {
						return err
					}
				}
				if budget -= len(keys); budget <= 0 {
					return nil
				}
			}
			done = true
			return meta.Delete(copyMarker(ws))
		})
		if err != nil {
			e.log.Error("remove an unfinished sandbox library", "workspace", ws, "err", err)
			return err
		}
	}
	return nil
}

// dropUnfinishedCopies removes the copies a stop cut short, at Open.
func (e *Engine) dropUnfinishedCopies() error {
	var wss []uint64
	if err := e.db.View(func(btx *bolt.Tx) error {
		c := btx.Bucket(bMeta).Cursor()
		for k, _ := c.Seek(keyCopying); k != nil && hasPrefix(k, keyCopying); k, _ = c.Next() {
			if len(k) == len(keyCopying)+8 {
				wss = append(wss, getU64(k[len(keyCopying):]))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, ws := range wss {
		e.log.Warn("removing the library of a sandbox a stop cut short", "workspace", ws)
		if err := e.dropCopy(ws, func(fn func(*tx) error) error {
			return e.db.Update(func(btx *bolt.Tx) error { return fn(e.newTx(btx)) })
		}); err != nil {
			return fmt.Errorf("remove an unfinished sandbox library: %w", err)
		}
	}
	return nil
}

// A sandbox's large library also goes in batches when the sandbox is
// deleted or reset: first the assets no job made (its starting library,
// its uploads), copyBatch per write, then the write that deletes or
// resets the rest; a reset then copies the library again in batches, with
// the ids it started with. Meanwhile the sandbox's own reads see its
// library partly gone or partly back; the call answers once it is whole.

// largeLibrary is the starting library of sandbox sb when it is large
// enough to go in batches; nil otherwise.
func (e *Engine) largeLibrary(sb Sandbox) *fixtures.Many[fixtures.LibraryAsset] {
	fw, _, err := e.sandboxWorkspace(sb.Spec)
	if err != nil || fw.Assets.Len() <= e.cfg.copyBatch {
		return nil
	}
	return &fw.Assets
}

// dropLibrary deletes the assets of workspace ws that no job made, with
// their index entries and owners, copyBatch per write.
func (e *Engine) dropLibrary(ws uint64) error {
	after := u64(ws)
	for more := true; more; {
		err := e.update(func(t *tx) error {
			c := t.b(bAssets).Cursor()
			prefix := u64(ws)
			var doomed []Asset
			var last []byte
			k, v := c.Seek(after)
			if k != nil && bytes.Equal(k, after) && len(after) > 8 {
				k, v = c.Next()
			}
			for ; k != nil && hasPrefix(k, prefix) && len(doomed) < e.cfg.copyBatch; k, v = c.Next() {
				last = bytes.Clone(k)
				var a Asset
				if err := decodeAsset(v, &a); err != nil {
					return err
				}
				if a.JobID == 0 {
					doomed = append(doomed, a)
				}
			}
			more = len(doomed) == e.cfg.copyBatch
			if last != nil {
				after = last
			}
			for i := range doomed {
				if err := t.deleteAssetRecords(&doomed[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteAssetRecords deletes an asset's record, index entries and owner.
func (t *tx) deleteAssetRecords(a *Asset) error {
	ws := a.WorkspaceID
	if ix := t.b(bAssetIndex); a.ID <= indexedTo(ix, ws) {
		if err := indexEntries(a, tagsOf(a), func(k, _ []byte) error { return ix.Delete(k) }); err != nil {
			return err
		}
	}
	ok := ownerKey('a', a.ID)
	if err := t.b(bOwners).Delete(ok[:]); err != nil {
		return err
	}
	ak := wsKey(ws, a.ID)
	return t.b(bAssets).Delete(ak[:])
}

// copyAgain writes reset sandbox id's library again, copyBatch per write,
// with the ids it started with (ids) and the projects' (by name, as the
// reset gave them), dated from created as the first copy was.
func (e *Engine) copyAgain(id string, ws uint64, created Stamp, lib *fixtures.Many[fixtures.LibraryAsset], projects []fixtures.Project, ids *StartIDs) error {
	byName := map[string]uint64{}
	if first, ok := ids.First[string(bProjects)]; ok {
		for i, p := range projects {
			byName[p.Name] = first + uint64(i)
		}
	}
	first := ids.First[string(bAssets)]
	n, now := lib.Len(), created.Time()
	return lib.Range(e.cfg.copyBatch, func(start int, items []fixtures.LibraryAsset) error {
		return e.update(func(t *tx) error {
			if t.b(bSandboxes).Get([]byte(id)) == nil {
				return sandboxNotFound(id) // deleted meanwhile: nothing is written for it
			}
			for j, la := range items {
				a, err := t.libraryAsset(ws, la, byName[la.Project])
				if err != nil {
					return err
				}
				i := start + j
				a.CreatedAt = StampOf(now.Add(-time.Duration(n-i) * time.Hour))
				a.ID = first + uint64(i)
				if err := t.insertAsset(a); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
