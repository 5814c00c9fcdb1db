// Command bigworld measures the mock server with a large library: it writes
// a fixture with one workspace of N assets, builds and starts the server
// binary on it (--reset), and reports the time to its first answer, then the
// time of a first page and of filtered pages near the end of the library.
// Then it restarts the server on the same file (no reset) and reports the
// time to the first answer again.
//
//	go run ./bench/bigworld                        # 10k and 1M assets
//	go run ./bench/bigworld -sizes 100000 -n 500
//
// It listens on loopback only, and gives up on a server that does not answer
// within -start-timeout.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const token = "mk_test_big_library"

func main() {
	sizes := flag.String("sizes", "10000,1000000", "library sizes to measure, comma-separated")
	n := flag.Int("n", 200, "requests per page kind")
	startTimeout := flag.Duration("start-timeout", 3*time.Minute, "longest wait for the first answer")
	keep := flag.String("dir", "", "directory for the fixture, state file and binary (default: a temporary one, removed at the end)")
	flag.Parse()

	dir := *keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "bigworld-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "mockserver")
	fmt.Println("building the server binary (not part of any measurement)")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockserver")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fail(fmt.Errorf("build: %w (run from the repository root)", err))
	}
	for _, s := range strings.Split(*sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || size < 1 {
			fail(fmt.Errorf("bad size %q", s))
		}
		if err := measure(bin, dir, size, *n, *startTimeout); err != nil {
			fail(err)
		}
	}
}

func measure(bin, dir string, size, n int, startTimeout time.Duration) error {
	fixture := filepath.Join(dir, fmt.Sprintf("world-%d.json", size))
	db := filepath.Join(dir, fmt.Sprintf("state-%d.db", size))
	data := fmt.Sprintf(`{"extends": "default", "workspaces": [{"name": "Big Library", "plan": "business",
		"rate_limit_per_minute": 1000000, "credits": 1000,
		"api_keys": [{"token": %q, "scopes": ["read"]}],
		"projects": {"count": 20}, "assets": {"count": %d}}]}`, token, size)
	if err := os.WriteFile(fixture, []byte(data), 0o600); err != nil {
		return err
	}
	os.Remove(db)
	fmt.Printf("\n== %d assets\n", size)

	srv, err := start(bin, fixture, db, true, startTimeout)
	if err != nil {
		return err
	}
	fmt.Printf("first answer after start (--reset, new file): %v\n", srv.firstAnswer.Round(time.Millisecond))
	err = pages(srv.url, n)
	srv.stop()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(db); err == nil {
		fmt.Printf("state file: %d MB\n", fi.Size()>>20)
	}

	srv, err = start(bin, fixture, db, false, startTimeout)
	if err != nil {
		return err
	}
	fmt.Printf("first answer after restart (same file, no reset): %v\n", srv.firstAnswer.Round(time.Millisecond))
	srv.stop()
	return nil
}

type server struct {
	cmd         *exec.Cmd
	url         string
	firstAnswer time.Duration
	done        chan struct{}
}

// start runs the server and waits for its first successful answer to
// GET /api/v1/account.
func start(bin, fixture, db string, reset bool, timeout time.Duration) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"--fixtures", fixture, "--db", db, "--addr", addr, "--clock", "manual"}
	if reset {
		args = append(args, "--reset")
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, url: "http://" + addr, done: make(chan struct{})}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { // the server's progress lines, as they come
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, `msg="seed`) || strings.Contains(line, "level=ERROR") {
				fmt.Println("  server:", line)
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(timeout)
	for {
		if code, _, err := get(s.url+"/api/v1/account", time.Second); err == nil && code == http.StatusOK {
			s.firstAnswer = time.Since(began)
			return s, nil
		}
		select {
		case <-s.done:
			return nil, errors.New("the server stopped before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("no answer within %v", timeout)
		}
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// pages times the first page of the library and filtered pages near its end
// (the oldest assets: the list is newest first).
func pages(url string, n int) error {
	code, body, err := get(url+"/api/v1/assets?limit=1", 10*time.Second)
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("first page: %d %v", code, err)
	}
	var pg struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &pg); err != nil || len(pg.Data) == 0 {
		return fmt.Errorf("first page: %v", err)
	}
	end := oldest(url, pg.Data[0].ID) + 1000 // a cursor near the end of the library
	code, body, err = get(url+"/api/v1/projects?limit=1", 10*time.Second)
	if err != nil {
		return fmt.Errorf("projects: %v", err)
	}
	if err := json.Unmarshal(body, &pg); err != nil || code != http.StatusOK || len(pg.Data) == 0 {
		return fmt.Errorf("projects: %d %v", code, err)
	}
	project := pg.Data[0].ID // the workspace's newest project: about one asset in 40 is in it
	for _, q := range []struct{ name, query string }{
		{"first page", "limit=20"},
		{"kind=video, near the end", "kind=video&limit=20&starting_after=%d"},
		{"kind=image&status=completed, near the end", "kind=image&status=completed&limit=20&starting_after=%d"},
		{"project_id, near the end", "project_id=" + strconv.FormatInt(project, 10) + "&limit=20&starting_after=%d"},
		{"query=.jpg (uploads), near the end", "query=.jpg&limit=20&starting_after=%d"},
	} {
		query := q.query
		if strings.Contains(query, "%d") {
			query = fmt.Sprintf(query, end)
		}
		var lat []time.Duration
		for range n {
			t0 := time.Now()
			code, _, err := get(url+"/api/v1/assets?"+query, 10*time.Second)
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("%s: %d %v", q.name, code, err)
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		fmt.Printf("  %-45s p50 %8v  p99 %8v  (%d requests)\n", q.name, lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond), n)
	}
	return nil
}

// oldest finds the oldest asset of the workspace (ids are shared by every
// workspace) by bisection on the cursor.
func oldest(url string, newest int64) int64 {
	lo, hi := int64(0), newest+1 // no asset below lo; some below hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		_, body, err := get(fmt.Sprintf("%s/api/v1/assets?limit=1&starting_after=%d", url, mid), 10*time.Second)
		if err != nil {
			break
		}
		if strings.Contains(string(body), `"data":[]`) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi - 1
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

func get(url string, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bigworld:", err)
	os.Exit(1)
}
