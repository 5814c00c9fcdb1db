package mediamock_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
	"github.com/mediamock/mediamock/sim"
)

// The state file of schema 2 and its snapshot are made by the server of
// 2338932 (scripts/migration-check builds it from git and runs
// sim/testdata/migrate/make.sh), with the answers it gave on that state
// (answers.json) and on the snapshot restored on a fresh server
// (answers-restored.json), in $MEDIAMOCK_MIGRATION_DATA; without it these
// tests are skipped. Migrated to schema 3 (when opened, when restored),
// they give the same answers, byte for byte.

// migrationFixture is the fixture the files were made on.
const migrationFixture = "sim/testdata/migrate/fixture.json"

// migrationFile is a gzipped file of the migration data, unpacked, with
// the fingerprint of today's fixture (see sim/migrate_test.go for why).
func migrationFile(t *testing.T, name string) []byte {
	t.Helper()
	dir := os.Getenv("MEDIAMOCK_MIGRATION_DATA")
	if dir == "" {
		t.Skip("the state files of schema 2 are made by the server of its day: run scripts/migration-check")
	}
	f, err := os.Open(filepath.Join(dir, name))
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(z)
	require.NoError(t, err)
	if filepath.Ext(filepath.Base(name[:len(name)-len(".gz")])) != ".db" {
		return data
	}
	w, err := fixtures.Load(migrationFixture, 0)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "file.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(store.Meta).Put(store.KeyFingerprint, []byte(sim.StateFingerprint(w, 0)))
	}))
	require.NoError(t, db.Close())
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// migrationServer serves the state file at path as the recording's server
// did: the fixture, the manual clock, seed 0, http://mock.test.
func migrationServer(t *testing.T, path string) *mediamock.Server {
	t.Helper()
	srv, err := mediamock.New(mediamock.Options{DBPath: path, FixturesPath: migrationFixture,
		Clock: mediamock.ClockManual, PublicURL: "http://mock.test", NoListener: true, JournalSize: -1})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
}

// answersLikeSchema2 holds srv to the answers of schema 2's server (in
// the file of the migration data's schema-v2 named answers).
func answersLikeSchema2(t *testing.T, srv *mediamock.Server, answersFile string) {
	t.Helper()
	var answers []struct {
		Path   string `json:"path"`
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	require.NoError(t, json.Unmarshal(migrationFile(t, "schema-v2/"+answersFile), &answers))
	require.NotEmpty(t, answers)
	for _, a := range answers {
		req := httptest.NewRequest("GET", a.Path, nil)
		req.Header.Set("Authorization", "Bearer mk_test_migrate")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		assert.Equal(t, a.Status, w.Code, a.Path)
		assert.Equal(t, a.Body, w.Body.String(), a.Path)
	}
}

func TestStateFileOfSchema2AnswersAsBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	require.NoError(t, os.WriteFile(path, migrationFile(t, "schema-v2/state.db.gz"), 0o600))
	answersLikeSchema2(t, migrationServer(t, path), "answers.json.gz")
}

func TestSnapshotOfSchema2AnswersAsBefore(t *testing.T) {
	srv := migrationServer(t, filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, srv.Restore(bytes.NewReader(migrationFile(t, "schema-v2/snapshot.db.gz"))))
	// A restore moves file addresses on: the answers of schema 2's server
	// after the same restore.
	answersLikeSchema2(t, srv, "answers-restored.json.gz")
}
