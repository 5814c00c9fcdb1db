package sim

import (
	"bytes"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// clearWorkspace deletes what a workspace made and holds; its record and
// keys go too unless keep is set. Records are found by the workspace's key
// prefix, and through them the jobs, events and owners they point at, so
// it costs what the workspace holds, whatever the size of the others.
func (t *tx) clearWorkspace(ws uint64, keep bool) error {
	prefix := u64(ws)
	var jobs []uint64
	var due [][]byte
	var owners [][]byte
	// Assets: their jobs and owners.
	if err := forPrefix(t.b(bAssets), prefix, func(k, v []byte) error {
		var a Asset
		if err := decodeAsset(v, &a); err != nil {
			return err
		}
		if a.JobID != 0 {
			jobs = append(jobs, a.JobID)
		}
		owners = append(owners, key("a", a.ID))
		return nil
	}); err != nil {
		return err
	}
	if err := forPrefix(t.b(bEncore), prefix, func(k, v []byte) error {
		var c EncoreCreation
		if err := jsonUnmarshal(v, &c); err != nil {
			return err
		}
		jobs = append(jobs, c.JobID)
		owners = append(owners, key("e", c.ID))
		return nil
	}); err != nil {
		return err
	}
	if err := forPrefix(t.b(bPubs), prefix, func(k, v []byte) error {
		var p Publication
		if err := jsonUnmarshal(v, &p); err != nil {
			return err
		}
		owners = append(owners, key("p", p.ID))
		if p.Due != nil {
			due = append(due, p.Due)
		}
		for _, d := range p.Deliveries {
			if d.Due != nil {
				due = append(due, d.Due)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(jobs)
	jobs = slices.Compact(jobs)
	for _, id := range jobs {
		var j Job
		ok, err := getJSON(t.b(bJobs), u64(id), &j)
		if err != nil {
			return err
		}
		if !ok || j.WorkspaceID != ws {
			continue
		}
		if j.Due != nil {
			due = append(due, j.Due)
		}
		if err := t.b(bJobs).Delete(u64(id)); err != nil {
			return err
		}
		t.touch(id) // a long poll on it answers: not found
	}
	for _, k := range due {
		if err := t.b(bDue).Delete(k); err != nil {
			return err
		}
	}
	for _, k := range owners {
		if err := t.b(bOwners).Delete(k); err != nil {
			return err
		}
	}
	for _, name := range [][]byte{bAssets, bAssetIndex, bQueue, bSlots, bLedger,
		bEncore, bPubs, bPubStatus, bBrandKits, bProjects, bCharacters, bSocial} {
		if err := deletePrefix(t.b(name), prefix); err != nil {
			return err
		}
	}
	for _, class := range []string{FileAsset, FileCharacter, FileStartFrame} {
		if err := deletePrefix(t.b(bFiles), key(class, ws)); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{bRate, bFaults} {
		if err := t.b(b).Delete(prefix); err != nil {
			return err
		}
	}
	t.e.rate.forget(ws)
	if keep {
		return nil
	}
	t.e.mu.RLock()
	tokens := slices.Clone(t.e.tokensByWS[ws])
	t.e.mu.RUnlock()
	for _, tok := range tokens {
		if err := t.b(bTokens).Delete([]byte(tok)); err != nil {
			return err
		}
	}
	t.removedWorkspaces = append(t.removedWorkspaces, ws)
	return t.deleteWorkspace(ws)
}

// forPrefix calls fn for every record whose key starts with prefix.
func forPrefix(b *bolt.Bucket, prefix []byte, fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// deletePrefix deletes every record whose key starts with prefix. The keys
// are gathered first: a bbolt cursor may skip a key after a delete.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	var keys [][]byte
	if err := forPrefix(b, prefix, func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
