package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart is a server's start as a user meets it: the mockserver
// binary started on its embedded default fixtures and a new state file,
// to its first 2xx answer to an API request (GET /api/v1/account, asked
// once it says on its log that it is ready). It also reports the CPU time
// the process spent by then, on all its threads (cpu-ms/op, read from /proc on Linux), which a busy
// machine inflates less than the time to the answer. bench/compare
// measures the same start beside its loads.
func BenchmarkStart(b *testing.B) {
	bin := buildMockserver(b)
	dir := b.TempDir()
	var cpu time.Duration
	runs := 0
	for i := 0; b.Loop(); i++ {
		addr := freeLoopback(b)
		cmd := exec.Command(bin, "--addr", addr, "--db", filepath.Join(dir, fmt.Sprintf("start%d.db", i)))
		logs, err := cmd.StderrPipe()
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = cmd.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// The server says when it listens: no polling, no sleeping.
		stuck := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		lines := bufio.NewScanner(logs)
		for lines.Scan() && !strings.Contains(lines.Text(), "mediamock ready") {
		}
		stuck.Stop()
		go io.Copy(io.Discard, logs)
		if code := status(addr); code/100 != 2 {
			cmd.Process.Kill()
			b.Fatalf("the server's first answer: %d (it said it was ready, or did not start within a minute)", code)
		}
		b.StopTimer()
		if c := threadsCPU(cmd.Process.Pid); c > 0 {
			cpu += c
			runs++
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("the server's stop: %v", err)
		}
		b.StartTimer()
	}
	if runs > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(runs), "cpu-ms/op")
	}
}

// freeLoopback is a loopback address no listener holds now.
func freeLoopback(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// status is the status of GET /api/v1/account at addr with the all-scopes
// key, 0 when there is no answer.
func status(addr string) int {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/v1/account HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer mk_test_all_scopes\r\nConnection: close\r\n\r\n", addr)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// threadsCPU is the CPU time a process has spent on all its threads
// (/proc/<pid>/task/*/schedstat, in nanoseconds); zero where /proc has
// none.
func threadsCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(n)
		}
	}
	return sum
}
