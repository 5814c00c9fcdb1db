package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// A Shelf keeps named snapshots on the server, in a folder beside the state
// file (its path plus ".snapshots"), so that they outlive a restart: each
// is a file of the snapshot format (what the owner's Snapshot writes, and
// its Restore reads, with the checks and any migration of an uploaded
// one), in a folder of its scope, and an index (index.json) says what each
// is. Names are a scope's own: a sandbox's snapshots are not the server's.
// The count and the bytes are bounded: per scope, and in all.
type Shelf struct {
	dir string
	// MaxCount bounds the snapshots in all, MaxPerScope those of one
	// scope other than the server's, MaxBytes their bytes in all.
	MaxCount, MaxPerScope int
	MaxBytes              int64

	mu      sync.Mutex
	entries []Shelved
}

// Shelved is a named snapshot on a shelf.
type Shelved struct {
	// Scope is "global" (the whole state) or a sandbox's id.
	Scope string `json:"scope"`
	Name  string `json:"name"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
	// Saved is when it was saved, on the wall clock; SimTime the
	// simulated clock then.
	Saved   time.Time `json:"saved"`
	SimTime time.Time `json:"sim_time"`
	// Description is what its saver said of it.
	Description string `json:"description,omitempty"`
	// Workspace and Created are the sandbox's, for a sandbox's snapshot:
	// it restores into that sandbox alone, as it then is.
	Workspace uint64 `json:"workspace,omitempty"`
	Created   int64  `json:"created,omitempty"`
}

// The bounds of a shelf, unless its owner sets others.
const (
	DefaultMaxNamed    = 64
	DefaultMaxPerScope = 8
	DefaultMaxBytes    = 16 << 30
)

// NameRule is what a snapshot's name must match.
var NameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ShelfError is a refusal of a shelf: a name it does not take, a bound
// reached, a snapshot it does not have. Kind says which.
type ShelfError struct {
	Kind    string // "invalid", "limit", "not_found"
	Message string
}

func (e *ShelfError) Error() string { return e.Message }

// OpenShelf opens the shelf of the state file at path, reading its index
// (a snapshot whose file is gone is dropped from it).
func OpenShelf(path string) (*Shelf, error) {
	s := &Shelf{dir: path + ".snapshots", MaxCount: DefaultMaxNamed, MaxPerScope: DefaultMaxPerScope, MaxBytes: DefaultMaxBytes}
	data, err := os.ReadFile(filepath.Join(s.dir, "index.json"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(data, &s.entries); err != nil {
		return nil, fmt.Errorf("snapshots index %s: %w", filepath.Join(s.dir, "index.json"), err)
	}
	s.entries = slices.DeleteFunc(s.entries, func(e Shelved) bool {
		_, err := os.Stat(s.file(e.Scope, e.Name))
		return err != nil
	})
	return s, nil
}

// file is where a snapshot lies.
func (s *Shelf) file(scope, name string) string {
	return filepath.Join(s.dir, scope, name+".db")
}

// List lists the snapshots of a scope ("" for every scope), by name.
func (s *Shelf) List(scope string) []Shelved {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Shelved{}
	for _, e := range s.entries {
		if scope == "" || e.Scope == scope {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Shelved) int {
		return strings.Compare(a.Scope+"/"+a.Name, b.Scope+"/"+b.Name)
	})
	return out
}

// Get is a scope's snapshot of that name.
func (s *Shelf) Get(scope, name string) (Shelved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(scope, name); i >= 0 {
		return s.entries[i], nil
	}
	return Shelved{}, notShelved(scope, name)
}

func notShelved(scope, name string) error {
	return &ShelfError{Kind: "not_found", Message: fmt.Sprintf("No snapshot %q in scope %s.", name, scope)}
}

func (s *Shelf) find(scope, name string) int {
	return slices.IndexFunc(s.entries, func(e Shelved) bool { return e.Scope == scope && e.Name == name })
}

// Save writes a snapshot with write and keeps it under e's scope and name,
// in place of one of that name: within the bounds, or refused (and
// nothing kept).
func (s *Shelf) Save(e Shelved, write func(w io.Writer) (int64, error)) (Shelved, error) {
	if !NameRule.MatchString(e.Name) {
		return Shelved{}, &ShelfError{Kind: "invalid", Message: "A snapshot's name is 1 to 64 lower-case letters, digits, dots, dashes and underscores, starting with a letter or a digit."}
	}
	if err := s.room(e.Scope, e.Name, 0); err != nil {
		return Shelved{}, err
	}
	if err := os.MkdirAll(filepath.Join(s.dir, e.Scope), 0o700); err != nil {
		return Shelved{}, err
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, e.Scope), ".saving-")
	if err != nil {
		return Shelved{}, err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone once renamed
	n, err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Shelved{}, err
	}
	e.Bytes = n
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.roomLocked(e.Scope, e.Name, n); err != nil {
		return Shelved{}, err
	}
	if err := os.Rename(tmp, s.file(e.Scope, e.Name)); err != nil {
		return Shelved{}, err
	}
	if i := s.find(e.Scope, e.Name); i >= 0 {
		s.entries[i] = e
	} else {
		s.entries = append(s.entries, e)
	}
	return e, s.writeIndex()
}

// room checks that a snapshot of n bytes may be kept under scope and name.
func (s *Shelf) room(scope, name string, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roomLocked(scope, name, n)
}

func (s *Shelf) roomLocked(scope, name string, n int64) error {
	count, inScope, bytes := 0, 0, n
	for _, e := range s.entries {
		if e.Scope == scope && e.Name == name {
			continue // replaced
		}
		count++
		bytes += e.Bytes
		if e.Scope == scope {
			inScope++
		}
	}
	switch {
	case count >= s.MaxCount:
		return &ShelfError{Kind: "limit", Message: fmt.Sprintf("The server keeps %d snapshots already; delete some first.", s.MaxCount)}
	case scope != "global" && inScope >= s.MaxPerScope:
		return &ShelfError{Kind: "limit", Message: fmt.Sprintf("A sandbox keeps at most %d snapshots; delete some first.", s.MaxPerScope)}
	case bytes > s.MaxBytes:
		return &ShelfError{Kind: "limit", Message: fmt.Sprintf("The server's snapshots would hold %d bytes, over its %d: delete some first.", bytes, s.MaxBytes)}
	}
	return nil
}

// Open opens a scope's snapshot for reading.
func (s *Shelf) Open(scope, name string) (io.ReadCloser, Shelved, error) {
	e, err := s.Get(scope, name)
	if err != nil {
		return nil, e, err
	}
	f, err := os.Open(s.file(scope, name))
	return f, e, err
}

// Delete removes a scope's snapshot.
func (s *Shelf) Delete(scope, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(scope, name)
	if i < 0 {
		return notShelved(scope, name)
	}
	if err := os.Remove(s.file(scope, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	s.entries = slices.Delete(s.entries, i, i+1)
	return s.writeIndex()
}

// DropScope removes every snapshot of a scope (a sandbox deleted); with
// scope "", of every sandbox (the state replaced), keeping the server's.
func (s *Shelf) DropScope(scope string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := len(s.entries)
	s.entries = slices.DeleteFunc(s.entries, func(e Shelved) bool {
		drop := e.Scope == scope || scope == "" && e.Scope != "global"
		if drop {
			os.Remove(s.file(e.Scope, e.Name))
			os.Remove(filepath.Join(s.dir, e.Scope)) // once empty
		}
		return drop
	})
	if len(s.entries) == before {
		return nil
	}
	return s.writeIndex()
}

// writeIndex writes the index in a new file put in place of the old. The
// caller holds s.mu.
func (s *Shelf) writeIndex() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s.entries, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, ".index.json")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "index.json"))
}
