package mediamock

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediamock/mediamock/internal/controlplane"
)

// --- named snapshots: the state saved on the server under a name

// SaveSnapshot saves the scope's state on the server under name: a
// server's, the whole state; a sandbox's, the sandbox alone. It replaces
// the scope's snapshot of that name, and outlives a restart (it is kept
// beside the state file). A name is 1 to 64 lower-case letters, digits,
// dots, dashes and underscores.
func (c Controls) SaveSnapshot(name string) (NamedSnapshot, error) {
	return c.plane.SaveSnapshot(c.scope(), name, "")
}

// Snapshots lists the scope's named snapshots, by name.
func (c Controls) Snapshots() ([]NamedSnapshot, error) { return c.plane.Snapshots(c.scope()) }

// RestoreSnapshot puts the scope's state back as its snapshot of that
// name holds it: a server's replaces the whole state (as Restore does); a
// sandbox's puts that sandbox back, and leaves the clock and every other
// workspace as they are.
func (c Controls) RestoreSnapshot(name string) error {
	_, err := c.plane.RestoreSnapshot(c.scope(), name)
	return err
}

// DeleteSnapshot deletes the scope's named snapshot.
func (c Controls) DeleteSnapshot(name string) error { return c.plane.DeleteSnapshot(c.scope(), name) }

// scope is the control plane's scope of the controls.
func (c Controls) scope() controlplane.Scope {
	s := controlplane.Scope{WS: c.ws}
	if sb, ok := c.plane.Eng.SandboxOf(c.ws); ok && c.ws != 0 {
		s.Sandbox = &sb
	}
	return s
}

// loadPacks puts snapshot packs on the shelf (Options.SnapshotPacks), each
// checked first: a pack that is no snapshot of this server's fixtures and
// seed stops the start.
func loadPacks(p *controlplane.Plane, packs []string) error {
	for _, pack := range packs {
		name, file, ok := strings.Cut(pack, "=")
		if !ok {
			file = pack
			name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		}
		if err := loadPack(p, name, file); err != nil {
			return fmt.Errorf("snapshot pack %s: %w", pack, err)
		}
	}
	return nil
}

func loadPack(p *controlplane.Plane, name, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	err = p.Eng.CheckSnapshot(f)
	f.Close()
	if err != nil {
		return err
	}
	_, err = p.SaveSnapshotFrom(name, "loaded from "+filepath.Base(file), func(w io.Writer) (int64, error) {
		f, err := os.Open(file)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		return io.Copy(w, f)
	})
	return err
}
