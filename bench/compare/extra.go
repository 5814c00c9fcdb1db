package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// startDefault starts the server on its embedded default fixtures n times,
// each on a new state file, and returns the median time from the start of
// the process to its first 2xx answer to an API request.
func startDefault(bin, dir string, n int) time.Duration {
	var took []time.Duration
	for i := range n {
		addr := freeAddr()
		cmd := exec.Command(bin, "--addr", addr, "--db", filepath.Join(dir, fmt.Sprintf("start%d.db", i)))
		began := time.Now()
		check(cmd.Start())
		req := []byte("GET /api/v1/account HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer mk_test_all_scopes\r\n\r\n")
		for {
			k := &conn{addr: addr}
			status, err := k.do(req)
			k.close()
			if err == nil && status < 300 {
				break
			}
			if time.Since(began) > time.Minute {
				check(fmt.Errorf("the server on its default fixtures did not answer within a minute"))
			}
			time.Sleep(200 * time.Microsecond)
		}
		took = append(took, time.Since(began))
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	slices.Sort(took)
	return took[len(took)/2]
}

// pollResult is what n open long polls cost the server.
type pollResult struct {
	n                 int
	rssBefore, rss    int64 // KiB
	idleCPU, idleSpan time.Duration
	skipped           string
}

// longPolls starts the server, creates one generation the manual clock
// never finishes, and opens n connections each waiting on it with
// wait_seconds=55. With all of them waiting it reads the server's resident
// size and the CPU time it spends over idle seconds.
func longPolls(bin, dir, fix string, n int, idle time.Duration) pollResult {
	r := pollResult{n: n, idleSpan: idle}
	addr := freeAddr()
	cmd := exec.Command(bin, "--addr", addr, "--db", filepath.Join(dir, "polls.db"), "--reset", "--fixtures", fix, "--clock", "manual", "--log-level", "warn")
	check(cmd.Start())
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	k := &conn{addr: addr}
	defer k.close()
	create := wireRequest("POST", addr, "/api/v1/generations", createBody)
	var id uint64
	for began := time.Now(); ; time.Sleep(time.Millisecond) {
		body, status, err := k.body(create)
		if err == nil && status/100 == 2 {
			var g struct {
				Assets []struct{ ID uint64 } `json:"assets"`
			}
			if json.Unmarshal(body, &g) == nil && len(g.Assets) > 0 {
				id = g.Assets[0].ID
				break
			}
		}
		if time.Since(began) > 2*time.Minute {
			r.skipped = "the server did not accept a generation"
			return r
		}
	}
	r.rssBefore, _ = rss(cmd.Process.Pid)
	poll := wireRequest("GET", addr, "/api/v1/generations/"+strconv.FormatUint(id, 10)+"?wait_seconds=55", "")
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			r.skipped = fmt.Sprintf("opened %d connections, then: %v", len(conns), err)
			return r
		}
		if _, err := c.Write(poll); err != nil {
			r.skipped = err.Error()
			return r
		}
		conns = append(conns, c)
	}
	// Every request has been read once the server holds a socket for each.
	for began := time.Now(); openSockets(cmd.Process.Pid) < n+1; time.Sleep(10 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			r.skipped = fmt.Sprintf("the server holds %d sockets of %d", openSockets(cmd.Process.Pid), n)
			return r
		}
	}
	time.Sleep(time.Second) // let the last requests reach their wait
	r.rss, _ = rss(cmd.Process.Pid)
	before := cpuTime(cmd.Process.Pid)
	time.Sleep(idle)
	r.idleCPU = cpuTime(cmd.Process.Pid) - before
	// None of them may have been answered early.
	for _, c := range conns[:min(len(conns), 100)] {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if m, _ := c.Read(make([]byte, 1)); m > 0 {
			r.skipped = "a long poll was answered before its job finished or its wait ended"
			return r
		}
	}
	return r
}

// body sends req and returns the answer's body too (small answers only).
func (k *conn) body(req []byte) ([]byte, int, error) {
	if k.c == nil {
		c, err := net.DialTimeout("tcp", k.addr, 5*time.Second)
		if err != nil {
			return nil, 0, err
		}
		k.c = c
	}
	if _, err := k.c.Write(req); err != nil {
		k.close()
		return nil, 0, err
	}
	k.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	m, err := k.c.Read(buf)
	k.close()
	if err != nil {
		return nil, 0, err
	}
	head, body, ok := bytes.Cut(buf[:m], []byte("\r\n\r\n"))
	if !ok || len(head) < 12 {
		return nil, 0, errAnswer
	}
	status, err := strconv.Atoi(string(head[9:12]))
	return body, status, err
}
