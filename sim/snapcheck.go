package sim

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// snapshot is an uploaded snapshot that passed the checks, open read-only.
type snapshot struct {
	db      *bolt.DB
	records int64
	clock   Stamp
	epoch   uint64
}

func invalidSnapshot(format string, args ...any) *Error {
	return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot is not usable: " + fmt.Sprintf(format, args...) + "."}
}

// checkSnapshot opens the file at path read-only and checks that it comes
// from the same fixtures, seed and version.
func (e *Engine) checkSnapshot(path string) (*snapshot, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return nil, invalidSnapshot("it is not a state file (%v)", err)
	}
	snap := &snapshot{db: db}
	err = db.View(func(stx *bolt.Tx) error {
		meta := stx.Bucket(bMeta)
		if meta == nil || string(meta.Get([]byte("fingerprint"))) != e.fingerprint() || string(meta.Get([]byte("schema"))) != schemaVersion {
			return invalidSnapshot("it comes from other fixtures, another seed or another version")
		}
		if v := meta.Get([]byte("clock")); len(v) == 8 {
			snap.clock = Stamp(getU64(v))
		}
		if v := meta.Get([]byte("epoch")); len(v) == 8 {
			snap.epoch = getU64(v)
		}
		return stx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			snap.records += int64(b.Stats().KeyN)
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return snap, nil
}
