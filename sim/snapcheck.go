package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A snapshot comes from outside: any byte of it may be wrong. checkSnapshot
// makes sure of it before the live state is touched, in three passes:
//
//  1. The page structure, read with ReadAt before bbolt maps anything
//     (checkPages): both meta pages valid (magic, version, checksum, page
//     size); in the one bbolt reads (the later), the high water mark within
//     the file; every page reachable from the root (and the freelist page)
//     below it, reached once, naming itself, of the right type, with every
//     element, key and value inside the page, keys in order, nested
//     buckets only at the top; branch pages not empty. bbolt trusts all of
//     this: it reads pages through unsafe pointers into the mapping, some of
//     it in goroutines of its own (Tx.Check, the freelist rebuild of a file
//     without a synced freelist) where a bad pointer is a fault or a panic
//     nobody can recover. bbolt itself only checks, at open, that the file
//     holds two pages and a valid meta page: it does not hold the meta's page
//     count against the file's size, so a cut file maps pages past its end
//     (SIGBUS when read). After this pass, what bbolt reads lies inside the
//     file. The file is then extended to the size bbolt maps, so that even a
//     read this pass failed to foresee finds zeros, not a SIGBUS.
//  2. bbolt's own consistency check (Tx.Check: freed or doubly used pages,
//     key order), in a read-only open, under recover and with faults turned
//     into panics for this goroutine (debug.SetPanicOnFault).
//  3. Every record decoded by the code that loads it (tokens, workspaces,
//     assets with the binary codec, jobs, publications, due events, rate
//     windows, meta: schema and fixture fingerprint), with the shape of every
//     key and the records that indexes point at.
//
// Not covered: a file changed by someone else while it is checked (it is
// ours, in a fresh directory beside the state file).

// snapshot is an uploaded snapshot that passed every check, open read-only.
type snapshot struct {
	db      *bolt.DB
	records int64
	clock   Stamp
	epoch   uint64
}

func invalidSnapshot(format string, args ...any) *Error {
	return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot is not usable: " + fmt.Sprintf(format, args...) + "."}
}

// checkSnapshot checks the file at path and opens it read-only.
func (e *Engine) checkSnapshot(path string) (snap *snapshot, err error) {
	if err := checkPages(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = invalidSnapshot("the file is damaged (%v)", r)
		}
		if err != nil && db != nil {
			db.Close()
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return nil, invalidSnapshot("it is not a state file (%v)", err)
	}
	snap = &snapshot{db: db}
	err = db.View(func(stx *bolt.Tx) error {
		var first error
		n := 0
		for err := range stx.Check() { // drained to the end: Check's goroutine waits for each send
			if first == nil {
				first = err
			}
			n++
		}
		if first != nil {
			return invalidSnapshot("bbolt's check found %d problems, the first: %v", n, first)
		}
		return e.checkRecords(stx, snap)
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// checkRecords decodes every record of the snapshot with the code that
// loads it, and checks the shape of every key.
func (e *Engine) checkRecords(stx *bolt.Tx, snap *snapshot) error {
	rc := &recordCheck{e: e, stx: stx, workspaces: map[uint64]bool{}}
	known := map[string]bool{}
	for _, name := range allBuckets {
		known[string(name)] = true
	}
	if err := stx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !known[string(name)] {
			return invalidSnapshot("it holds an unknown bucket %q", name)
		}
		return nil
	}); err != nil {
		return err
	}
	meta := stx.Bucket(bMeta)
	if meta == nil {
		return invalidSnapshot("it has no meta bucket")
	}
	if string(meta.Get([]byte("schema"))) != schemaVersion || string(meta.Get([]byte("fingerprint"))) != e.fingerprint() {
		return invalidSnapshot("it comes from other fixtures, another seed or another version")
	}
	for _, name := range allBuckets { // in this order: records are checked after those they point at
		b := stx.Bucket(name)
		if b == nil {
			continue
		}
		check := recordChecks[string(name)]
		err := b.ForEach(func(k, v []byte) error {
			snap.records++
			if v == nil {
				return invalidSnapshot("bucket %q, key %s: a nested bucket", name, showKey(k))
			}
			if err := check(rc, k, v); err != nil {
				return invalidSnapshot("bucket %q, key %s: %v", name, showKey(k), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	snap.clock, snap.epoch = rc.clock, rc.epoch
	return nil
}

func showKey(k []byte) string {
	if len(k) > 32 {
		return fmt.Sprintf("%x…", k[:32])
	}
	return fmt.Sprintf("%x", k)
}

// recordCheck is what the checks of records share.
type recordCheck struct {
	e          *Engine
	stx        *bolt.Tx
	workspaces map[uint64]bool
	clock      Stamp
	epoch      uint64
}

func (rc *recordCheck) has(bucket, k []byte) bool { return rc.stx.Bucket(bucket).Get(k) != nil }

func (rc *recordCheck) workspace(ws uint64) error {
	if !rc.workspaces[ws] {
		return fmt.Errorf("workspace %d does not exist", ws)
	}
	return nil
}

// asset checks that the asset an index entry points at exists.
func (rc *recordCheck) asset(ws, id []byte) error {
	if b := rc.stx.Bucket(bAssets); b == nil || b.Get(key(ws, id)) == nil {
		return fmt.Errorf("asset %d of workspace %d does not exist", getU64(id), getU64(ws))
	}
	return nil
}

func keyLen(k []byte, n int) error {
	if len(k) != n {
		return fmt.Errorf("a key of %d bytes, want %d", len(k), n)
	}
	return nil
}

func u64Value(v []byte) error {
	if len(v) != 8 {
		return fmt.Errorf("a value of %d bytes, want 8", len(v))
	}
	return nil
}

// wsRecord checks a ws|id key and decodes its JSON value into T, whose
// workspace and id (when it has them) must match the key.
func wsRecord[T any](ids func(*T) (ws, id uint64)) func(*recordCheck, []byte, []byte) error {
	return func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 16); err != nil {
			return err
		}
		var rec T
		if err := jsonUnmarshal(v, &rec); err != nil {
			return err
		}
		if ids != nil {
			if ws, id := ids(&rec); ws != getU64(k) || id != getU64(k[8:]) {
				return fmt.Errorf("the record says workspace %d, id %d", ws, id)
			}
		}
		return rc.workspace(getU64(k))
	}
}

// slashed checks a ws|name|"/"|id key.
func slashed(k []byte) error {
	if len(k) < 8+1+1+8 || k[len(k)-9] != '/' {
		return errors.New("not a ws|name/id key")
	}
	return nil
}

// recordChecks check one record of each bucket.
var recordChecks = map[string]func(rc *recordCheck, k, v []byte) error{
	string(bMeta): func(rc *recordCheck, k, v []byte) error {
		switch string(k) {
		case "clock":
			if err := u64Value(v); err != nil {
				return err
			}
			rc.clock = Stamp(getU64(v))
		case "epoch":
			if err := u64Value(v); err != nil {
				return err
			}
			rc.epoch = getU64(v)
		case string(keyIncomplete):
			return errors.New("the snapshot is of a state whose reset or restore had not finished")
		case string(keySandboxCount):
			return u64Value(v)
		}
		return nil
	},
	string(bWorkspaces): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 8); err != nil {
			return err
		}
		var w Workspace
		if err := jsonUnmarshal(v, &w); err != nil {
			return err
		}
		if w.ID != getU64(k) {
			return fmt.Errorf("the record says workspace %d", w.ID)
		}
		rc.workspaces[w.ID] = true
		return nil
	},
	string(bTokens): func(rc *recordCheck, k, v []byte) error {
		var t Token
		if err := jsonUnmarshal(v, &t); err != nil {
			return err
		}
		if t.Token != string(k) {
			return errors.New("the record names another token")
		}
		return rc.workspace(t.WorkspaceID)
	},
	string(bAssets): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 16); err != nil {
			return err
		}
		var a Asset
		if err := decodeAsset(v, &a); err != nil {
			return err
		}
		switch {
		case a.WorkspaceID != getU64(k) || a.ID != getU64(k[8:]):
			return fmt.Errorf("the record says workspace %d, asset %d", a.WorkspaceID, a.ID)
		case len(indexTags[a.Kind]) == 0:
			return fmt.Errorf("unknown kind %q", a.Kind)
		case statusTags[a.Status] == 0:
			return fmt.Errorf("unknown status %q", a.Status)
		}
		return rc.workspace(a.WorkspaceID)
	},
	string(bAssetKind): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 17); err != nil {
			return err
		}
		if _, ok := kindOfTag[k[8]]; !ok {
			return fmt.Errorf("unknown kind tag %d", k[8])
		}
		return rc.asset(k[:8], k[9:])
	},
	string(bAssetStatus): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 17); err != nil {
			return err
		}
		if k[8] == 0 || k[8] > byte(len(statusTags)) {
			return fmt.Errorf("unknown status tag %d", k[8])
		}
		return rc.asset(k[:8], k[9:])
	},
	string(bAssetProject): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 24); err != nil {
			return err
		}
		return rc.asset(k[:8], k[16:])
	},
	string(bAssetText): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 16); err != nil {
			return err
		}
		return rc.asset(k[:8], k[8:])
	},
	string(bJobs): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 8); err != nil {
			return err
		}
		var j Job
		if err := jsonUnmarshal(v, &j); err != nil {
			return err
		}
		if j.ID != getU64(k) {
			return fmt.Errorf("the record says job %d", j.ID)
		}
		return rc.workspace(j.WorkspaceID)
	},
	string(bQueue): func(rc *recordCheck, k, v []byte) error {
		if err := slashed(k); err != nil {
			return err
		}
		if !rc.has(bJobs, k[len(k)-8:]) {
			return fmt.Errorf("job %d does not exist", getU64(k[len(k)-8:]))
		}
		return nil
	},
	string(bSlots): func(rc *recordCheck, k, v []byte) error {
		if len(k) <= 8 {
			return errors.New("not a ws|lane key")
		}
		return u64Value(v)
	},
	string(bDue): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 16); err != nil {
			return err
		}
		var ev Event
		if err := jsonUnmarshal(v, &ev); err != nil {
			return err
		}
		if _, ok := eventSteps[ev.Kind]; !ok {
			return fmt.Errorf("unknown event kind %q", ev.Kind)
		}
		return nil
	},
	string(bLedger): wsRecord[LedgerEntry](nil),
	string(bEncore): wsRecord(func(c *EncoreCreation) (uint64, uint64) { return c.WorkspaceID, c.ID }),
	string(bPubs):   wsRecord(func(p *Publication) (uint64, uint64) { return p.WorkspaceID, p.ID }),
	string(bPubStatus): func(rc *recordCheck, k, v []byte) error {
		if err := slashed(k); err != nil {
			return err
		}
		if !rc.has(bPubs, key(k[:8], k[len(k)-8:])) {
			return fmt.Errorf("publication %d of workspace %d does not exist", getU64(k[len(k)-8:]), getU64(k))
		}
		return nil
	},
	string(bOwners): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 9); err != nil {
			return err
		}
		if k[0] != 'a' && k[0] != 'e' && k[0] != 'p' {
			return fmt.Errorf("unknown owner class %q", k[0])
		}
		return u64Value(v)
	},
	string(bBrandKits):  wsRecord(func(b *BrandKit) (uint64, uint64) { return b.WorkspaceID, b.ID }),
	string(bProjects):   wsRecord(func(p *Project) (uint64, uint64) { return p.WorkspaceID, p.ID }),
	string(bCharacters): wsRecord(func(c *Character) (uint64, uint64) { return c.WorkspaceID, c.ID }),
	string(bSocial):     wsRecord(func(s *SocialAccount) (uint64, uint64) { return s.WorkspaceID, s.ID }),
	string(bFiles): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 17); err != nil {
			return err
		}
		if k[0] != FileAsset[0] && k[0] != FileCharacter[0] && k[0] != FileStartFrame[0] {
			return fmt.Errorf("unknown file class %q", k[0])
		}
		return nil
	},
	string(bRate): func(rc *recordCheck, k, v []byte) error {
		if err := keyLen(k, 8); err != nil {
			return err
		}
		var w rateWindow
		return json.Unmarshal(v, &w)
	},
	string(bFaults): func(rc *recordCheck, k, v []byte) error {
		if string(k) != "state" {
			if err := keyLen(k, 8); err != nil {
				return errors.New("unknown key")
			}
			if err := rc.workspace(getU64(k)); err != nil {
				return err
			}
		}
		var f LegacyFaults // an older file's, taken over as rules once open
		return jsonUnmarshal(v, &f)
	},
	string(bSandboxes): func(rc *recordCheck, k, v []byte) error {
		var s Sandbox
		if err := jsonUnmarshal(v, &s); err != nil {
			return err
		}
		if s.ID != string(k) {
			return errors.New("the record names another sandbox")
		}
		return rc.workspace(s.WorkspaceID)
	},
}
