package sim

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/internal/store"
)

// Migrations of the state file (store.Migration says how they stay safe
// across a crash): a file of schema 1 or 2 is brought to 3 when it is
// opened, and an uploaded snapshot of 1 or 2 when it is restored (named
// snapshots too, which are snapshots), before its records are checked.
//
//   - 2 to 3: the library's four index buckets (idx_kind, idx_status,
//     idx_project, idx_text) become asset_index (index.go). The entries are
//     made again from the asset records, every asset's, each workspace's
//     mark at its newest asset, in key order and in bounded transactions;
//     the last removes the four buckets and writes the version.
//   - 1 to 3: the same, and each asset record, JSON in 1, is written in the
//     binary codec (codec.go) in the transaction that indexes it. A record
//     may so be of either kind in a file of schema 1 a crash cut short: it
//     is read as what its first byte says.
//
// The other records are the same in every version: the buckets added since
// (sandboxes, ...) are added empty at open (store.DB.AddMissingBuckets).

// The buckets of schemas 1 and 2 that 3 retired.
var retiredIndexes = [][]byte{[]byte("idx_kind"), []byte("idx_status"), []byte("idx_project"), []byte("idx_text")}

// migrations are the schema's migrations, batch assets per transaction (0:
// store.DefaultBatch), telling progress (when not nil) the assets done
// after each transaction.
func migrations(batch int, progress func(done int64)) map[string]store.Migration {
	if batch <= 0 {
		batch = store.DefaultBatch
	}
	to3 := func(from string) store.Migration {
		return func(db *bolt.DB) error { return migrateTo3(db, from, batch, progress) }
	}
	return map[string]store.Migration{"1": to3("1"), "2": to3("2")}
}

// migrateTo3 brings a file of schema 1 or 2 to 3.
func migrateTo3(db *bolt.DB, from string, batch int, progress func(done int64)) error {
	// A migration a crash cut short left an index half-made: it starts
	// again.
	if err := db.Update(func(btx *bolt.Tx) error {
		if btx.Bucket(bAssetIndex) != nil {
			if err := btx.DeleteBucket(bAssetIndex); err != nil {
				return err
			}
		}
		_, err := btx.CreateBucket(bAssetIndex)
		return err
	}); err != nil {
		return fmt.Errorf("make %s: %w", bAssetIndex, err)
	}
	var after []byte // the last asset done
	var done int64
	for more := true; more; {
		err := db.Update(func(btx *bolt.Tx) error {
			more = false
			assets := btx.Bucket(bAssets)
			if assets == nil {
				return nil
			}
			ix := btx.Bucket(bAssetIndex)
			ix.FillPercent = 1 // in key order: every page filled whole
			var recoded [][2][]byte
			c := assets.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			n := 0
			for ; k != nil; k, v = c.Next() {
				if n == batch {
					more = true
					break
				}
				a, binary, err := oldAsset(k, v)
				if err != nil {
					return err
				}
				tags := tagsOf(&a)
				if len(tags) == 0 {
					return fmt.Errorf("asset %d: unknown kind %q", a.ID, a.Kind)
				}
				if statusTags[a.Status] == 0 {
					return fmt.Errorf("asset %d: unknown status %q", a.ID, a.Status)
				}
				if !binary {
					recoded = append(recoded, [2][]byte{bytes.Clone(k), encodeAsset(&a)})
				}
				if err := putIndexEntries(ix, &a, tags); err != nil {
					return err
				}
				mk := markKey(a.WorkspaceID)
				if err := ix.Put(mk[:], u64(a.ID)); err != nil {
					return err
				}
				after = bytes.Clone(k)
				n++
			}
			done += int64(n)
			// Written once the cursor is done with the bucket: a put moves
			// a cursor over the same bucket.
			for _, r := range recoded {
				if err := assets.Put(r[0], r[1]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("index the library (schema %s to %s): %w", from, schemaVersion, err)
		}
		if progress != nil {
			progress(done)
		}
	}
	return db.Update(func(btx *bolt.Tx) error {
		for _, name := range retiredIndexes {
			if btx.Bucket(name) != nil {
				if err := btx.DeleteBucket(name); err != nil {
					return err
				}
			}
		}
		return btx.Bucket(store.Meta).Put(store.KeySchema, []byte(schemaVersion))
	})
}

// oldAsset decodes an asset record of schema 1 (JSON) or 2 (the binary
// codec, as in 3), and checks that it is the one its key names; binary
// says which it was.
func oldAsset(k, v []byte) (a Asset, binary bool, err error) {
	if len(k) != 16 {
		return a, false, fmt.Errorf("asset key %s: %d bytes, want 16", store.ShowKey(k), len(k))
	}
	if len(v) > 0 && v[0] == '{' {
		err = json.Unmarshal(v, &a)
	} else {
		binary = true
		err = decodeAsset(v, &a)
	}
	switch {
	case err != nil:
		return a, binary, fmt.Errorf("asset %d: %w", getU64(k[8:]), err)
	case a.WorkspaceID != getU64(k) || a.ID != getU64(k[8:]):
		return a, binary, fmt.Errorf("asset key %s: the record says workspace %d, asset %d", store.ShowKey(k), a.WorkspaceID, a.ID)
	}
	return a, binary, nil
}

// migrate brings the state file from schema from to this one, at Open.
func (e *Engine) migrate(from string) error {
	began := e.cfg.WallClock()
	e.log.Info("migrating the state file", "path", e.cfg.Path, "from", from, "to", schemaVersion)
	var done int64
	progress := func(n int64) {
		done = n
		if e.cfg.onMigrate != nil {
			e.cfg.onMigrate(n)
		}
	}
	if err := e.db.Migrate(migrations(e.cfg.batchSize, progress)[from]); err != nil {
		return err
	}
	e.log.Info("migrated the state file", "path", e.cfg.Path, "from", from, "to", schemaVersion, "assets", done, "elapsed", e.cfg.WallClock().Sub(began))
	return nil
}
