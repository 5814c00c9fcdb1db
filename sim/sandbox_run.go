package sim

import (
	"bytes"
	"fmt"
	"time"
)

// RunSandbox finishes a sandbox's work now, without moving the shared
// clock: every event of its workspace due within limit from now (jobs
// moving, publications delivering, and the events those schedule) is
// applied at the current time, in the order they were due, until none is.
// A stuck job never moves; a publication scheduled beyond the limit stays
// scheduled. It returns how many events it applied.
func (e *Engine) RunSandbox(id string, limit time.Duration) (int, error) {
	sb, err := e.Sandbox(id)
	if err != nil {
		return 0, err
	}
	if limit < 0 {
		return 0, InvalidError([]Violation{{In: "body", Field: "limit", Reason: "must not be negative"}})
	}
	applied := 0
	err = e.update(func(t *tx) error {
		if t.b(bSandboxes).Get([]byte(id)) == nil {
			return sandboxNotFound(id)
		}
		horizon := uint64(t.now.Add(limit).UnixNano())
		if limit > MaxTime.Sub(t.now) {
			horizon = uint64(MaxTime.UnixNano())
		}
		for pass := 0; ; pass++ {
			if pass > 1<<20 {
				return fmt.Errorf("run sandbox %s: the events keep coming", id)
			}
			k, ev, ok, err := t.firstDueOf(sb.WorkspaceID, horizon)
			if err != nil || !ok {
				return err
			}
			if err := t.b(bDue).Delete(k); err != nil {
				return err
			}
			if err := t.applySafely(k, ev); err != nil {
				t.e.log.Error("dropped an event that cannot be applied", "event", ev.Kind, "id", ev.ID, "err", err)
			}
			applied++
		}
	})
	return applied, err
}

// firstDueOf finds the earliest event of workspace ws due by horizon.
func (t *tx) firstDueOf(ws, horizon uint64) ([]byte, Event, bool, error) {
	c := t.b(bDue).Cursor()
	for k, v := c.First(); k != nil && len(k) >= 8 && getU64(k[:8]) <= horizon; k, v = c.Next() {
		var ev Event
		if err := jsonUnmarshal(v, &ev); err != nil {
			continue // applyDue drops it in its turn
		}
		if t.eventWorkspace(ev) == ws {
			return bytes.Clone(k), ev, true, nil
		}
	}
	return nil, Event{}, false, nil
}

// eventWorkspace is the workspace an event works for; 0 when unknown.
func (t *tx) eventWorkspace(ev Event) uint64 {
	switch ev.Kind {
	case EventJobProcess, EventJobFinish:
		var j Job
		if ok, err := getJSON(t.b(bJobs), u64(ev.ID), &j); ok && err == nil {
			return j.WorkspaceID
		}
	case EventPubStart, EventPubDeliver:
		return t.ownerOf("p", ev.ID)
	}
	return 0
}
