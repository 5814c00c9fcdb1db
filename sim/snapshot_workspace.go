package sim

import (
	"bytes"
	"encoding/json"
	"io"

	bolt "go.etcd.io/bbolt"
)

// A sandbox's named snapshot is a snapshot of the whole state, like any
// (Snapshot): restored into its sandbox alone (RestoreWorkspace), it puts
// back what the sandbox's workspace held then, and leaves every other
// workspace, the clock and the sandbox's keys as they are.

// wsBuckets are the buckets whose keys start with a workspace id: a
// workspace's records and its index (with its mark).
var wsBuckets = [][]byte{bAssets, bAssetIndex, bQueue, bSlots, bLedger,
	bEncore, bPubs, bPubStatus, bBrandKits, bProjects, bCharacters, bSocial}

// CheckSnapshot receives a snapshot and checks it as Restore does, and
// changes nothing: a snapshot pack loaded at start (--snapshot).
func (e *Engine) CheckSnapshot(r io.Reader) error {
	snap, _, err := e.receive(r)
	if err != nil {
		return err
	}
	return snap.Close()
}

// RestoreWorkspace puts workspace ws back as a snapshot of the whole state
// (Snapshot) holds it: its records, jobs, due events and files replace
// its own, in one write; its keys, the clock and every other workspace
// stay as they are. The snapshot is received and checked as Restore
// checks one, before anything changes. Due events the clock has passed
// since are applied by the next drive, as any late event.
func (e *Engine) RestoreWorkspace(ws uint64, r io.Reader) error {
	snap, _, err := e.receive(r)
	if err != nil {
		return err
	}
	defer snap.Close()
	return snap.DB.View(func(stx *bolt.Tx) error {
		if stx.Bucket(bWorkspaces).Get(u64(ws)) == nil {
			return invalidSnapshot("it does not hold workspace %d", ws)
		}
		err := e.update(func(t *tx) error {
			if err := t.clearWorkspace(ws, true); err != nil {
				return err
			}
			return t.copyWorkspace(stx, ws)
		})
		if err == nil {
			e.wsRestores.Add(1)
		}
		return err
	})
}

// copyWorkspace copies workspace ws's records from a snapshot's read
// transaction: its record, every record under its key prefix, the jobs of
// its assets and Encore creations, the due events of those and of its
// publications, the owners of its ids and its files.
func (t *tx) copyWorkspace(stx *bolt.Tx, ws uint64) error {
	var w Workspace
	if err := json.Unmarshal(stx.Bucket(bWorkspaces).Get(u64(ws)), &w); err != nil {
		return err
	}
	if err := t.putWorkspace(&w); err != nil {
		return err
	}
	t.reloadPrincipals, t.workspacesChanged = true, true
	prefix := u64(ws)
	put := func(name, k, v []byte) error { return t.b(name).Put(bytes.Clone(k), bytes.Clone(v)) }
	for _, name := range wsBuckets {
		if err := forPrefix(stx.Bucket(name), prefix, func(k, v []byte) error { return put(name, k, v) }); err != nil {
			return err
		}
	}
	for _, class := range []string{FileAsset, FileCharacter, FileStartFrame} {
		if err := forPrefix(stx.Bucket(bFiles), key(class, ws), func(k, v []byte) error { return put(bFiles, k, v) }); err != nil {
			return err
		}
	}
	// What the records point at: jobs, due events, owners.
	var jobs []uint64
	var due [][]byte
	owner := func(class string, id uint64) error { return t.b(bOwners).Put(key(class, id), u64(ws)) }
	if err := forPrefix(stx.Bucket(bAssets), prefix, func(_, v []byte) error {
		var a Asset
		if err := decodeAsset(v, &a); err != nil {
			return err
		}
		if a.JobID != 0 {
			jobs = append(jobs, a.JobID)
		}
		return owner("a", a.ID)
	}); err != nil {
		return err
	}
	if err := forPrefix(stx.Bucket(bEncore), prefix, func(_, v []byte) error {
		var c EncoreCreation
		if err := jsonUnmarshal(v, &c); err != nil {
			return err
		}
		jobs = append(jobs, c.JobID)
		return owner("e", c.ID)
	}); err != nil {
		return err
	}
	if err := forPrefix(stx.Bucket(bPubs), prefix, func(_, v []byte) error {
		var p Publication
		if err := jsonUnmarshal(v, &p); err != nil {
			return err
		}
		if p.Due != nil {
			due = append(due, p.Due)
		}
		for _, d := range p.Deliveries {
			if d.Due != nil {
				due = append(due, d.Due)
			}
		}
		return owner("p", p.ID)
	}); err != nil {
		return err
	}
	for _, id := range jobs {
		v := stx.Bucket(bJobs).Get(u64(id))
		if v == nil {
			continue
		}
		var j Job
		if err := jsonUnmarshal(v, &j); err != nil {
			return err
		}
		if j.WorkspaceID != ws {
			continue
		}
		if err := put(bJobs, u64(id), v); err != nil {
			return err
		}
		if j.Due != nil {
			due = append(due, j.Due)
		}
		t.touch(id) // a long poll on it reads it again
	}
	for _, k := range due {
		if v := stx.Bucket(bDue).Get(k); v != nil {
			if err := put(bDue, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
