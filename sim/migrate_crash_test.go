package sim

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/fixtures"
)

// migrateChildEnv makes TestMigrationChild the process a crash test kills:
// it migrates the state file it names, 10 assets a transaction, prints
// each transaction done, and after the number of them in
// migrateChildStopEnv waits to be killed.
const (
	migrateChildEnv      = "MEDIAMOCK_MIGRATE_CHILD_DB"
	migrateChildStopEnv  = "MEDIAMOCK_MIGRATE_CHILD_STOP"
	migrateChildWorldEnv = "MEDIAMOCK_MIGRATE_CHILD_WORLD" // "big": bigWorld(500)
)

// killedFile is the state file of schema 2 the crash test migrates, and
// its world: the one schema 2's server made (scripts/migration-check),
// else one this test lays out as schema 2 did (asSchema) from a library of
// 500 assets, so that the test runs in every go test.
func killedFile(t *testing.T) (data []byte, w *fixtures.World, world string) {
	if os.Getenv("MEDIAMOCK_MIGRATION_DATA") != "" {
		return unpacked(t, "schema-v2/state.db.gz"), migrationWorld(t), ""
	}
	w = bigWorld(t, 500)
	return asSchema(t, snapshotOf(t, newEngine(t, engineOpts{world: w})), "2"), w, "big"
}

// TestMigrationKilled kills a process with kill -9 in the middle of a
// migration from schema 2, after 1, 12 and 30 of its transactions of
// assets (31 or more), and after its end: each file then opens, migrated again from the
// start where it was not finished, and holds the library as it was.
func TestMigrationKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	data, w, world := killedFile(t)
	for _, stop := range []int{1, 12, 30, 1000} {
		t.Run(fmt.Sprintf("after %d", stop), func(t *testing.T) {
			path := withFingerprint(t, data, w)
			lib := readOldLibrary(t, path)
			cmd := exec.Command(os.Args[0], "-test.run=^TestMigrationChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), migrateChildEnv+"="+path, migrateChildStopEnv+"="+strconv.Itoa(stop), migrateChildWorldEnv+"="+world)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			in, err := cmd.StdinPipe() // never written: the child waits on it
			require.NoError(t, err)
			defer in.Close()
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(out)
			batches := 0
			for lines.Scan() {
				if strings.HasPrefix(lines.Text(), "MIGRATED ") {
					batches++
				}
				if batches == stop || lines.Text() == "OPEN" {
					break
				}
			}
			require.NoError(t, cmd.Process.Kill()) // SIGKILL: no deferred function, no close
			_ = cmd.Wait()
			if stop < 1000 {
				require.Equal(t, stop, batches, "killed in the middle")
			}
			e := newEngine(t, engineOpts{path: path, world: w})
			lib.heldTo(t, e)
			usable(t, e)
		})
	}
}

// TestMigrationChild is the process TestMigrationKilled kills.
func TestMigrationChild(t *testing.T) {
	path := os.Getenv(migrateChildEnv)
	if path == "" {
		t.Skip("the process a crash test kills")
	}
	stop, _ := strconv.Atoi(os.Getenv(migrateChildStopEnv))
	w := migrationWorld(t)
	if os.Getenv(migrateChildWorldEnv) == "big" {
		w = bigWorld(t, 500)
	}
	batches := 0
	e, err := Open(Config{Path: path, World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil), batchSize: 10,
		onMigrate: func(done int64) {
			fmt.Printf("MIGRATED %d\n", done)
			if batches++; batches == stop {
				bufio.NewReader(os.Stdin).ReadString('\n') // killed while it waits
			}
		}})
	require.NoError(t, err)
	fmt.Println("OPEN")
	bufio.NewReader(os.Stdin).ReadString('\n')
	e.Close()
}
