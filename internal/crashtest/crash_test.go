// Package crashtest kills a server process under write load and checks
// what it acknowledged survived. It is tests alone: what they share with
// the other packages' tests (requests to a server, the control API checked
// against control.json) is internal/testkit's, which reaches the child
// process by its address (testkit.Remote).
package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/store"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
)

const (
	childEnv = "MEDIAMOCK_CRASH_CHILD_DB"
	// seedEnv makes the child seed a state file from the fixtures at
	// MEDIAMOCK_CRASH_FIXTURES, stopped by SIGTERM, with its log on stdout.
	seedEnv     = "MEDIAMOCK_CRASH_SEED_DB"
	fixturesEnv = "MEDIAMOCK_CRASH_FIXTURES"
)

// TestMain runs a server instead of the tests when the crash test starts
// this binary as its child: it prints the server's URL and serves until it
// is killed.
func TestMain(m *testing.M) {
	if db := os.Getenv(seedEnv); db != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
		srv, err := mediamock.New(mediamock.Options{Addr: "127.0.0.1:0", DBPath: db, FixturesPath: os.Getenv(fixturesEnv),
			Clock: mediamock.ClockManual, Logger: log, Stop: ctx.Done()})
		if errors.Is(err, mediamock.ErrStopped) {
			fmt.Println("stopped:", err)
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("seeded before the signal")
		srv.Close()
		os.Exit(3)
	}
	if db := os.Getenv(childEnv); db != "" {
		srv, err := mediamock.New(mediamock.Options{Addr: "127.0.0.1:0", DBPath: db, Clock: mediamock.ClockManual, JournalSize: -1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(srv.URL())
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		srv.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type child struct {
	cmd *exec.Cmd
	url string
	srv testkit.Remote // the child, for the checks with testkit's helpers
}

func startChild(t *testing.T, db string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+db)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child prints its URL when it serves")
	c := &child{cmd: cmd, url: strings.TrimSpace(line)}
	c.srv = testkit.Remote(c.url)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

// call makes a request of the write load, which must not fail the test when
// the server is gone (the kill): it returns the error instead.
func call(client *http.Client, method, url, token, body string, out any) (int, error) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method != "GET" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if out != nil {
		json.Unmarshal(data, out)
	}
	return resp.StatusCode, nil
}

// SIGKILL in the middle of a write load loses no acknowledged generation,
// and the credits still reconcile with the ledger, in the default
// (non-durable) mode: commits reach the operating system before they are
// acknowledged, and the process's death does not take them back.
func TestKillUnderWriteLoseNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	db := t.TempDir() + "/state.db"
	c := startChild(t, db)
	client := &http.Client{Timeout: 10 * time.Second}
	var ws struct {
		WorkspaceID uint64 `json:"workspace_id"`
		Token       string `json:"token"`
	}
	status, body := testkit.Control(t, c.srv, "POST", "/workspaces", `{"name":"crash","plan":"business","credits":1000000,"rate_limit_per_minute":1000000}`)
	require.Equal(t, 201, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &ws))

	const killAt = 300
	var mu sync.Mutex
	var acked []uint64
	var wg sync.WaitGroup
	var once sync.Once
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				var g struct {
					Assets []struct {
						ID uint64 `json:"id"`
					} `json:"assets"`
				}
				status, err := call(client, "POST", c.url+"/api/v1/generations", ws.Token,
					`{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse","count":2}`, &g)
				if err != nil {
					return // the server is gone
				}
				if status != 201 {
					continue
				}
				mu.Lock()
				acked = append(acked, g.Assets[0].ID, g.Assets[1].ID)
				n := len(acked) / 2
				mu.Unlock()
				if n >= killAt {
					once.Do(func() { c.cmd.Process.Signal(syscall.SIGKILL) })
				}
			}
		}()
	}
	wg.Wait()
	c.cmd.Wait()
	require.GreaterOrEqual(t, len(acked)/2, killAt, "the load reached the kill")

	again := startChild(t, db)
	for _, id := range acked {
		status, _, _ := testkit.REST(t, again.srv, ws.Token, "GET", fmt.Sprintf("/generations/%d", id), nil)
		require.Equal(t, 200, status, "acknowledged asset %d survived the kill", id)
	}
	var ledger struct {
		Balance int64             `json:"credits_balance"`
		Entries []sim.LedgerEntry `json:"entries"`
	}
	status, body = testkit.Control(t, again.srv, "GET", fmt.Sprintf("/workspaces/%d/ledger", ws.WorkspaceID), "")
	require.Equal(t, 200, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &ledger))
	assert.NoError(t, sim.CheckLedger(ledger.Entries, ledger.Balance), "the ledger explains the balance")
	charged := map[uint64]bool{}
	charges := 0
	for _, e := range ledger.Entries {
		if e.Type == "charge" {
			charges++
			for _, id := range e.AssetIDs {
				charged[id] = true
			}
		}
	}
	for _, id := range acked {
		assert.True(t, charged[id], "asset %d was charged", id)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%d generations acknowledged before SIGKILL, all found after restart; %d charges in the ledger", len(acked)/2, charges)
	t.Log(buf.String())
}

// SIGTERM while the state file is seeded stops the seed at its next commit
// (it does not wait for a million records), and leaves the marker of an
// unfinished seed: the next start seeds again, and serves.
func TestSigtermDuringSeedLeavesTheMarker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir := t.TempDir()
	db, fixture := dir+"/state.db", dir+"/world.json"
	// Big enough that the seed takes seconds: the signal comes long before its end.
	require.NoError(t, os.WriteFile(fixture, []byte(`{"extends": "default", "workspaces": [{"name": "Big", "plan": "business",
		"api_keys": [{"token": "mk_test_crash_big", "scopes": ["read"]}], "assets": {"count": 150000}}]}`), 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), seedEnv+"="+db, fixturesEnv+"="+fixture)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	var log strings.Builder
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "seed begins") {
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			break
		}
	}
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
	}
	require.NoError(t, cmd.Wait(), "%s", log.String())
	assert.Contains(t, log.String(), "stopped: ")

	bdb, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, bdb.View(func(btx *bolt.Tx) error {
		assert.Equal(t, "seed", string(btx.Bucket(store.Meta).Get(store.KeyIncomplete)), "the marker of an unfinished seed stays")
		return nil
	}))
	require.NoError(t, bdb.Close())

	c := startChild(t, db) // the default fixtures: the unfinished file is seeded again
	status, _, _ := testkit.REST(t, c.srv, mediamock.KeyAllScopes, "GET", "/account", nil)
	assert.Equal(t, 200, status)
}
