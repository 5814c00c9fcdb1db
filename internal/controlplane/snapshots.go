package controlplane

import (
	"errors"
	"io"
	"net/http"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/store"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Named snapshots: the whole state, or one sandbox, saved on the server
// under a name (Plane.Shelf, beside the state file) and restored, listed
// and deleted by name. A scope's names are its own: the server's
// snapshots hold the whole state; a sandbox's restore into it alone, and
// its control token reaches those only.

// shelfScope is the shelf's scope of a call's scope: "global", or the
// sandbox's id.
func shelfScope(s Scope) (string, error) {
	switch {
	case s.WS == 0:
		return "global", nil
	case s.Sandbox != nil:
		return s.Sandbox.ID, nil
	}
	return "", &sim.Error{Kind: sim.EINVALID, Code: "validation_failed", Message: "Named snapshots are the server's or a sandbox's: name a sandbox (?sandbox=), not a workspace.",
		Details: map[string]any{"violations": []sim.Violation{{In: "query", Field: "workspace_id", Reason: "names a workspace: snapshots are the server's or a sandbox's"}}}}
}

// shelved is a shelf's snapshot as the control API shows it.
func shelved(e store.Shelved) controlapi.NamedSnapshot {
	out := controlapi.NamedSnapshot{Object: "snapshot", Name: e.Name, Scope: e.Scope, Bytes: e.Bytes,
		SavedAt: sim.FormatTime(e.Saved), SimTime: sim.FormatTime(e.SimTime), Description: e.Description}
	if e.Scope != "global" {
		out.Scope, out.SandboxID = "sandbox "+e.Scope, e.Scope
	}
	return out
}

// SaveSnapshot saves the whole state (s the server's scope) or a
// sandbox's under name, in place of the scope's snapshot of that name.
func (p *Plane) SaveSnapshot(s Scope, name, description string) (controlapi.NamedSnapshot, error) {
	scope, err := shelfScope(s)
	if err != nil {
		return controlapi.NamedSnapshot{}, err
	}
	e := store.Shelved{Scope: scope, Name: name, Description: description, Saved: p.WallClock().UTC(), SimTime: p.Eng.Clock().Now()}
	if s.Sandbox != nil {
		e.Workspace, e.Created = s.Sandbox.WorkspaceID, int64(s.Sandbox.CreatedAt)
	}
	e, err = p.Shelf.Save(e, p.Eng.Snapshot)
	return shelved(e), shelfError(err)
}

// SaveSnapshotFrom keeps a snapshot that write copies (a pack loaded at
// start, checked already) as the server's of that name.
func (p *Plane) SaveSnapshotFrom(name, description string, write func(io.Writer) (int64, error)) (controlapi.NamedSnapshot, error) {
	e, err := p.Shelf.Save(store.Shelved{Scope: "global", Name: name, Description: description, Saved: p.WallClock().UTC(), SimTime: p.Eng.Clock().Now()}, write)
	return shelved(e), shelfError(err)
}

// Snapshots lists a scope's named snapshots.
func (p *Plane) Snapshots(s Scope) ([]controlapi.NamedSnapshot, error) {
	scope, err := shelfScope(s)
	if err != nil {
		return nil, err
	}
	out := []controlapi.NamedSnapshot{}
	for _, e := range p.Shelf.List(scope) {
		out = append(out, shelved(e))
	}
	return out, nil
}

// RestoreSnapshot restores a scope's named snapshot: the server's replace
// the whole state (as PUT /_mock/snapshot does), a sandbox's put its
// sandbox back as it was (the clock, its keys and every other workspace
// stay).
func (p *Plane) RestoreSnapshot(s Scope, name string) (controlapi.NamedSnapshot, error) {
	scope, err := shelfScope(s)
	if err != nil {
		return controlapi.NamedSnapshot{}, err
	}
	f, e, err := p.Shelf.Open(scope, name)
	if err != nil {
		return controlapi.NamedSnapshot{}, shelfError(err)
	}
	defer f.Close()
	if s.Sandbox == nil {
		return shelved(e), p.RestoreState(f)
	}
	if e.Workspace != s.Sandbox.WorkspaceID || e.Created != int64(s.Sandbox.CreatedAt) {
		return controlapi.NamedSnapshot{}, &sim.Error{Kind: sim.ECONFLICT, Code: "snapshot_stale",
			Message: "The snapshot was saved from another sandbox of this id (the state was restored since): delete it."}
	}
	return shelved(e), p.Eng.RestoreWorkspace(s.Sandbox.WorkspaceID, f)
}

// RestoreState replaces the whole state with a snapshot (PUT
// /_mock/snapshot, a server's named snapshot): then what the server keeps
// per workspace is forgotten (Restored), and the sandboxes' named
// snapshots go with the sandboxes they were of.
func (p *Plane) RestoreState(r io.Reader) error {
	if err := p.Eng.Restore(r); err != nil {
		return err
	}
	if p.Shelf != nil {
		if err := p.Shelf.DropScope(""); err != nil {
			return err
		}
	}
	return p.Restored()
}

// DeleteSnapshot deletes a scope's named snapshot.
func (p *Plane) DeleteSnapshot(s Scope, name string) error {
	scope, err := shelfScope(s)
	if err != nil {
		return err
	}
	return shelfError(p.Shelf.Delete(scope, name))
}

// shelfError is a shelf's refusal as the control API's error.
func shelfError(err error) error {
	var se *store.ShelfError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case "not_found":
		return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: se.Message}
	case "limit":
		return &sim.Error{Kind: sim.ECONFLICT, Code: "snapshot_limit_reached", Message: se.Message}
	}
	return sim.InvalidError([]sim.Violation{{In: "path", Field: "name", Reason: se.Message}})
}

// --- the operations of control.json

type snapshotInput struct {
	Name string `path:"name"`
}

type saveSnapshotInput struct {
	Name string `path:"name"`
	Body struct {
		Description string `json:"description"`
	} `body:""`
}

func saveSnapshot(r *request, in saveSnapshotInput) (int, any, error) {
	out, err := r.p.SaveSnapshot(r.scope, in.Name, in.Body.Description)
	return http.StatusCreated, out, err
}

func listSnapshots(r *request, _ none) (int, any, error) {
	list, err := r.p.Snapshots(r.scope)
	return http.StatusOK, wire.List[controlapi.NamedSnapshot]{Object: "list", Data: list}, err
}

// restoredJSON is a named snapshot restored, with the clock it left.
type restoredJSON struct {
	Snapshot controlapi.NamedSnapshot `json:"snapshot"`
	Clock    any                      `json:"clock"`
}

func restoreSnapshot(r *request, in snapshotInput) (int, any, error) {
	s, err := r.p.RestoreSnapshot(r.scope, in.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, restoredJSON{Snapshot: s, Clock: ClockOf(r.p.Eng)}, nil
}

func deleteSnapshot(r *request, in snapshotInput) (int, any, error) {
	if err := r.p.DeleteSnapshot(r.scope, in.Name); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deletedJSON{ID: in.Name, Object: "snapshot", Deleted: true}, nil
}
