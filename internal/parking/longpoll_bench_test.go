package parking_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

var pollCount = flag.Int("polls", 10000, "long polls BenchmarkLongPollMemory holds open at once")

// BenchmarkLongPollMemory weighs parking: the memory a server holds for
// each open long poll, parked and waiting where it is (the plain fallback:
// a goroutine of net/http's at a deep stack, with the connection's
// buffers). The server runs in a process of its own (the
// test binary, as TestLongPollServerProcess), whose heap, stacks and
// resident size are read before and after -polls polls (10,000 by
// default) wait on a job that never ends: 10,000 polls hold 20,000
// sockets, more than one process may open here. Run it alone, once:
//
//	go test -run '^$' -bench BenchmarkLongPollMemory -benchtime 1x ./internal/parking/
func BenchmarkLongPollMemory(b *testing.B) {
	if testkit.Race {
		b.Skip("the race detector changes what memory costs")
	}
	for _, mode := range []string{"parked", "plain"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				m := pollMemory(b, mode, *pollCount)
				b.ReportMetric(m.perPoll, "B/poll")
				b.ReportMetric(m.rssPerPoll, "rss-B/poll")
				b.ReportMetric(m.goroutines, "goroutines/poll")
				b.ReportMetric(float64(m.rss)/(1<<20), "rss-MB")
			}
		})
	}
}

// polledMemory is what n open long polls cost a server process.
type polledMemory struct {
	perPoll, rssPerPoll, goroutines float64
	rss                             int64 // bytes, with the polls open
}

// pollMemory starts a server process (parked or plain), opens n long polls
// on it and reads what they cost.
func pollMemory(b *testing.B, mode string, n int) polledMemory {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLongPollServerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MEDIAMOCK_LONGPOLL_SERVER="+mode)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	outPipe, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	defer func() {
		io.WriteString(in, "quit\n")
		in.Close()
		cmd.Wait()
	}()
	out := bufio.NewScanner(outPipe)
	line := func(prefix string) []string {
		for out.Scan() {
			if f := strings.Fields(out.Text()); len(f) > 0 && f[0] == prefix {
				return f[1:]
			}
		}
		b.Fatalf("the server process ended before %s: %v", prefix, out.Err())
		return nil
	}
	ready := line("READY") // address, path, key
	addr, path, key := ready[0], ready[1], ready[2]
	measure := func(open int) (heapStack, rss int64, goroutines int) {
		fmt.Fprintf(in, "measure %d\n", open)
		f := line("MEM")
		heapStack, _ = strconv.ParseInt(f[0], 10, 64)
		g, _ := strconv.Atoi(f[1])
		rss, _ = strconv.ParseInt(f[2], 10, 64)
		return heapStack, rss, g
	}
	poll := []byte("GET " + path + "?wait_seconds=55 HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key + "\r\n\r\n")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	open := func(k int) {
		for range k {
			c, err := net.DialTimeout("tcp", addr, testkit.Bound)
			require.NoError(b, err, "after %d connections", len(conns))
			_, err = c.Write(poll)
			require.NoError(b, err)
			conns = append(conns, c)
		}
	}
	// A few polls first, so that what a server allocates once is paid.
	const warm = 10
	open(warm)
	mem0, rss0, g0 := measure(warm)
	open(n)
	mem, rss, g := measure(warm + n)
	// None of them was answered: each waited all along.
	for _, c := range conns[:min(len(conns), 100)] {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if m, _ := c.Read(make([]byte, 1)); m > 0 {
			b.Fatal("a long poll was answered before its job finished or its wait ended")
		}
	}
	return polledMemory{perPoll: float64(mem-mem0) / float64(n), rssPerPoll: float64(rss-rss0) / float64(n),
		goroutines: float64(g-g0) / float64(n), rss: rss}
}

// TestLongPollServerProcess is the server process of
// BenchmarkLongPollMemory; it is skipped in any other run. Its server runs
// on the manual clock, parked or plain (MEDIAMOCK_LONGPOLL_SERVER), with
// one generation that never ends in a sandbox whose rate window lets every
// poll in. It prints READY with its address, the generation's path and the
// sandbox's key, then answers "measure n" on stdin, once n polls wait,
// with MEM and its live heap and stacks, goroutines and resident size.
func TestLongPollServerProcess(t *testing.T) {
	mode := os.Getenv("MEDIAMOCK_LONGPOLL_SERVER")
	if mode == "" {
		t.Skip("the server process of BenchmarkLongPollMemory")
	}
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	addr := strings.TrimPrefix(srv.URL(), "http://")
	if mode == "plain" {
		// The server's handler behind an http.Server of the same settings
		// as its own, but not its parking listener: a request of another
		// server is never parked (the plain fallback).
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		plain := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout: 60 * time.Second, WriteTimeout: 90 * time.Second, IdleTimeout: 60 * time.Second}
		go plain.Serve(ln)
		t.Cleanup(func() { plain.Close() })
		addr = ln.Addr().String()
	}
	sb := srv.Sandbox(t, func(s *mediamock.SandboxSpec) { s.RateLimitPerMinute = 1 << 20 })
	req, err := http.NewRequest("POST", srv.BaseURL()+"/generations", strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"a long poll"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+sb.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	var gen struct {
		Assets []struct{ ID uint64 } `json:"assets"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&gen))
	resp.Body.Close()
	require.NotEmpty(t, gen.Assets)
	require.NoError(t, srv.StickAsset(gen.Assets[0].ID))
	fmt.Printf("READY %s %s/generations/%d %s\n", addr, mediamock.BasePath, gen.Assets[0].ID, sb.APIKey)
	cmds := bufio.NewScanner(os.Stdin)
	for cmds.Scan() {
		f := strings.Fields(cmds.Text())
		if len(f) == 0 || f[0] != "measure" {
			return
		}
		n, _ := strconv.Atoi(f[1])
		testkit.Poll(t, fmt.Sprintf("%d long polls waiting", n), func() bool {
			st, err := srv.Engine().Stats()
			return err == nil && st.LongPolls == n
		})
		runtime.GC()
		runtime.GC() // stacks shrink at a collection
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Printf("MEM %d %d %d\n", m.HeapAlloc+m.StackInuse, runtime.NumGoroutine(), residentBytes())
	}
}

// residentBytes is the process's resident size (VmRSS), 0 where /proc
// does not say.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
