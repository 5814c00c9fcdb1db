package sim

import (
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/internal/store"
)

// The third pass of a snapshot's check (store.DB.Receive does the first
// two, the pages and bbolt's own check, and the buckets): every record
// decoded by the code that loads it (tokens, workspaces, assets with the
// binary codec, jobs, publications, due events, rate windows, meta),
// with the shape of every key and the records that indexes point at.

func invalidSnapshot(format string, args ...any) *Error {
	return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot is not usable: " + fmt.Sprintf(format, args...) + "."}
}

// recordCheck is what the checks of records share: it is the store's
// Checker of one snapshot, and learns its clock and epoch.
type recordCheck struct {
	e          *Engine
	stx        *bolt.Tx
	workspaces map[uint64]bool
	clock      Stamp
	epoch      uint64
}

// Record checks one record with the check of its bucket.
func (rc *recordCheck) Record(bucket string, k, v []byte) error {
	return recordChecks[bucket](rc, k, v)
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
		case string(store.KeyIncomplete):
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
	string(bAssetIndex): func(rc *recordCheck, k, v []byte) error {
		if len(k) < 9 {
			return errors.New("not a ws|class key")
		}
		switch ws := k[:8]; k[8] {
		case ixKind:
			if err := keyLen(k, 18); err != nil {
				return err
			}
			if _, ok := kindOfTag[k[9]]; !ok {
				return fmt.Errorf("unknown kind tag %d", k[9])
			}
			return rc.asset(ws, k[10:])
		case ixStatus:
			if err := keyLen(k, 18); err != nil {
				return err
			}
			if k[9] == 0 || k[9] > byte(len(statusTags)) {
				return fmt.Errorf("unknown status tag %d", k[9])
			}
			return rc.asset(ws, k[10:])
		case ixProject:
			if err := keyLen(k, 25); err != nil {
				return err
			}
			return rc.asset(ws, k[17:])
		case ixText:
			if err := keyLen(k, 17); err != nil {
				return err
			}
			return rc.asset(ws, k[9:])
		case ixMark:
			if err := keyLen(k, 9); err != nil {
				return err
			}
			if err := u64Value(v); err != nil {
				return err
			}
			return rc.workspace(getU64(ws))
		}
		return fmt.Errorf("unknown index class %q", k[8])
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
