package sim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/internal/store"
)

// The layout of the state file (package store keeps the file; the engine
// decides what lies in it): its buckets, the keys of their records, and
// their encodings (JSON, or codec.go's for assets).

// Buckets of the bbolt file. Keys that start with a workspace id keep each
// workspace's records together and sorted by id, so a page is a cursor walk.
var (
	bMeta       = store.Meta                // schema, fixture fingerprint, seed, clock
	bWorkspaces = []byte("workspaces")      // ws -> Workspace
	bTokens     = []byte("tokens")          // token -> Token
	bAssets     = []byte("assets")          // ws|id -> Asset (the sequence gives asset ids); the index: index.go
	bJobs       = []byte("jobs")            // id -> Job
	bQueue      = []byte("queue")           // ws|lane|job -> "" (jobs waiting for a slot)
	bSlots      = []byte("slots")           // ws|lane -> running count
	bDue        = []byte("due")             // at|seq -> Event
	bLedger     = []byte("ledger")          // ws|id -> LedgerEntry
	bEncore     = []byte("encore")          // ws|id -> EncoreCreation
	bPubs       = []byte("publications")    // ws|id -> Publication
	bPubStatus  = []byte("idx_pub_status")  // ws|status/id -> ""
	bOwners     = []byte("owners")          // a|asset, e|creation, p|publication -> ws
	bBrandKits  = []byte("brand_kits")      // ws|id -> BrandKit
	bProjects   = []byte("projects")        // ws|id -> Project
	bCharacters = []byte("characters")      // ws|id -> Character
	bSocial     = []byte("social_accounts") // ws|id -> SocialAccount
	bFiles      = []byte("files")           // asset id -> media bytes
	bRate       = []byte("rate_windows")    // ws -> rateWindow
	bFaults     = []byte("faults")          // "state" -> global faults, ws -> a workspace's

	// appendOnly are the buckets whose records are only ever added after
	// the last of their key range and never rewritten (store.Schema says
	// why their pages are filled whole). Records rewritten in place
	// (assets, jobs) keep the default.
	// The index (asset_index) is one too: its entries go at the tails of
	// their ranges, by id; a status moved is a delete and an insert.
	appendOnly = [][]byte{bLedger, bOwners, bAssetIndex, bQueue}

	allBuckets = [][]byte{bMeta, bWorkspaces, bTokens, bAssets, bAssetIndex,
		bJobs, bQueue, bSlots, bDue, bLedger, bEncore, bPubs, bPubStatus, bOwners, bBrandKits, bProjects, bCharacters,
		bSocial, bFiles, bRate, bFaults, bSandboxes}

	// schema is the layout as the store knows it. Version 3 keeps the
	// library's index in one bucket, the newest assets' in their records
	// (index.go); 2 kept it in four buckets (idx_kind, idx_status,
	// idx_project, idx_text); 1 stored assets as JSON (migrate.go brings
	// both to 3).
	schema = store.Schema{Version: schemaVersion, Buckets: allBuckets, AppendOnly: appendOnly, Migrations: migrations(0, nil)}
)

// schemaVersion is the version of the layout this file describes.
const schemaVersion = "3"

// u64 encodes an id big-endian, so that keys sort by id.
func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func getU64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// key joins parts into one key: uint64 as 8 big-endian bytes, strings and
// single bytes as they are.
func key(parts ...any) []byte {
	k := make([]byte, 0, 24)
	for _, p := range parts {
		switch v := p.(type) {
		case uint64:
			k = binary.BigEndian.AppendUint64(k, v)
		case byte:
			k = append(k, v)
		case string:
			k = append(k, v...)
		case []byte:
			k = append(k, v...)
		default:
			panic(fmt.Sprintf("key: unsupported part %T", p))
		}
	}
	return k
}

// idKey is id|id (a workspace and a record, a due time and a sequence) in
// a new slice: one allocation, where key boxes each part.
func idKey(a, b uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k[:8], a)
	binary.BigEndian.PutUint64(k[8:], b)
	return k
}

// ownerKey is class|id, the key of bOwners ("a" for an asset), without
// allocating.
func ownerKey(class byte, id uint64) [9]byte {
	var k [9]byte
	k[0] = class
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

// tagKey is ws|tag|id without allocating.
func tagKey(ws uint64, tag byte, id uint64) [17]byte {
	var k [17]byte
	binary.BigEndian.PutUint64(k[:8], ws)
	k[8] = tag
	binary.BigEndian.PutUint64(k[9:], id)
	return k
}

// wsKey is ws|id without allocating.
func wsKey(ws, id uint64) [16]byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], ws)
	binary.BigEndian.PutUint64(k[8:], id)
	return k
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode record %x: %w", k, err)
	}
	return b.Put(k, data)
}

// getJSON decodes the record at k into v; it reports whether it existed.
func getJSON(b *bolt.Bucket, k []byte, v any) (bool, error) {
	data := b.Get(k)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("decode record %x: %w", k, err)
	}
	return true, nil
}

// Stamp is a point in simulated time, stored as Unix nanoseconds.
type Stamp int64

// StampOf converts a time to a Stamp.
func StampOf(t time.Time) Stamp { return Stamp(t.UnixNano()) }

// Time converts a Stamp to a time in UTC.
func (s Stamp) Time() time.Time { return time.Unix(0, int64(s)).UTC() }

// String renders the stamp in the wire format.
func (s Stamp) String() string { return FormatTime(s.Time()) }

// IsZero reports whether the stamp is unset.
func (s Stamp) IsZero() bool { return s == 0 }

// ownerOf is the workspace of an asset ("a"), Encore creation ("e") or
// publication ("p") id, 0 when unknown: ids are global, records are kept
// per workspace.
func (t *tx) ownerOf(class string, id uint64) uint64 {
	if len(class) == 1 {
		k := ownerKey(class[0], id)
		if v := t.b(bOwners).Get(k[:]); v != nil {
			return getU64(v)
		}
		return 0
	}
	if v := t.b(bOwners).Get(key(class, id)); v != nil {
		return getU64(v)
	}
	return 0
}
