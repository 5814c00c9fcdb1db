package parking_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// pollConn is a client's connection that sends long polls as raw
// HTTP/1.1 and reads their answers.
type pollConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialPoll(t testing.TB, srv *mediamock.Server) *pollConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &pollConn{c: c, br: bufio.NewReader(c)}
}

func (p *pollConn) send(t testing.TB, path string, header ...string) {
	t.Helper()
	req := "GET " + path + " HTTP/1.1\r\nHost: " + p.c.RemoteAddr().String() + "\r\nAuthorization: Bearer " + mediamock.KeyAllScopes + "\r\n"
	for _, h := range header {
		req += h + "\r\n"
	}
	_, err := io.WriteString(p.c, req+"\r\n")
	require.NoError(t, err)
}

func (p *pollConn) answer(t testing.TB) (*http.Response, string) {
	t.Helper()
	p.c.SetReadDeadline(time.Now().Add(testkit.Bound))
	resp, err := http.ReadResponse(p.br, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// pollServer is a server on the manual clock with one generation, which
// stays queued until the test moves the clock (stuck: never, until then).
func pollServer(t testing.TB, stuck bool) (*mediamock.Server, string) {
	t.Helper()
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	gen := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a long poll"}`)
	id := uint64(gen["assets"].([]any)[0].(map[string]any)["id"].(float64))
	if stuck {
		require.NoError(t, srv.StickAsset(id))
	}
	return srv, fmt.Sprintf("%s/generations/%d", mediamock.BasePath, id)
}

// openPolls is how many long polls wait now.
func openPolls(t testing.TB, srv *mediamock.Server) int {
	st, err := srv.Engine().Stats()
	require.NoError(t, err)
	return st.LongPolls
}

func awaitPolls(t testing.TB, srv *mediamock.Server, n int) {
	t.Helper()
	testkit.Poll(t, fmt.Sprintf("%d long polls waiting", n), func() bool { return openPolls(t, srv) == n })
}

func journaled(srv *mediamock.Server, id string) (mediamock.JournalEntry, bool) {
	for _, e := range srv.Journal(mediamock.JournalFilter{}) {
		if e.ID == id {
			return e, true
		}
	}
	return mediamock.JournalEntry{}, false
}

// A long poll that waits is answered when its job ends, as any other
// answer: the same headers and body as a read without a wait, journaled
// once with its latency, and its connection serves the next request.
func TestLongPollParkedAnswersWhenTheJobEnds(t *testing.T) {
	srv, path := pollServer(t, false)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=55")
	awaitPolls(t, srv, 1)
	require.NoError(t, srv.Advance(time.Hour))
	resp, body := p.answer(t)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"status":"completed"`)
	assert.False(t, resp.Close, "the connection is kept")
	id := resp.Header.Get("X-Request-Id")
	require.NotEmpty(t, id)
	for _, h := range []string{"Date", "Content-Type", "Content-Length", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		assert.NotEmpty(t, resp.Header.Get(h), h)
	}
	assert.Equal(t, int64(len(body)), resp.ContentLength)
	assert.Equal(t, 0, openPolls(t, srv))
	e, ok := journaled(srv, id)
	require.True(t, ok, "the long poll is journaled")
	assert.Equal(t, http.StatusOK, e.Status)
	assert.Equal(t, "wait_seconds=55", e.Query)
	assert.Equal(t, "getGeneration", e.Operation)
	assert.Equal(t, int64(len(body)), e.ResponseBytes)

	// The same connection serves the next request: a read without a wait,
	// answered by net/http itself, with the same headers and body.
	p.send(t, path)
	again, body2 := p.answer(t)
	require.Equal(t, http.StatusOK, again.StatusCode, body2)
	assert.Equal(t, body, body2)
	assert.Equal(t, headerNames(again.Header), headerNames(resp.Header))
	assert.Equal(t, again.Header.Get("Content-Type"), resp.Header.Get("Content-Type"))
}

func headerNames(h http.Header) []string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// A long poll whose job does not end is answered when its wait ends on
// the simulated clock, with the job as it is.
func TestLongPollParkedAnswersWhenItsWaitEnds(t *testing.T) {
	srv, path := pollServer(t, true)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=30", "Connection: close")
	awaitPolls(t, srv, 1)
	require.NoError(t, srv.Advance(10*time.Second)) // the job moves, the wait goes on
	awaitPolls(t, srv, 1)
	require.NoError(t, srv.Advance(time.Minute))
	head, body := p.rawAnswer(t)
	require.Equal(t, "HTTP/1.1 200 OK\r\n", head[0], body)
	assert.NotContains(t, body, `"status":"completed"`)
	// Asked to close, it closes as net/http does: the last header says so.
	assert.Equal(t, "Connection: close\r\n", head[len(head)-1])
	_, err := p.br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the connection is closed")
	assert.Equal(t, 0, openPolls(t, srv))
}

// A long poll whose client hangs up ends at once: it no longer counts
// among the open polls and is journaled.
func TestLongPollParkedClientHangsUp(t *testing.T) {
	srv, path := pollServer(t, true)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=55")
	awaitPolls(t, srv, 1)
	before := len(srv.Journal(mediamock.JournalFilter{}))
	require.NoError(t, p.c.Close())
	awaitPolls(t, srv, 0)
	testkit.Poll(t, "the poll journaled", func() bool { return len(srv.Journal(mediamock.JournalFilter{})) == before+1 })
	e := srv.Journal(mediamock.JournalFilter{})[0]
	assert.Equal(t, "wait_seconds=55", e.Query)
}

// Shutting the server down answers the waiting long polls with the state
// as it is, and closes their connections.
func TestLongPollParkedAnsweredOnShutdown(t *testing.T) {
	srv, path := pollServer(t, true)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=55")
	awaitPolls(t, srv, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	resp, body := p.answer(t)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"status":`)
	assert.True(t, resp.Close, "Connection: close")
	require.NoError(t, testkit.Receive(t, done, "the shutdown"))
}

// A client that sends its next request while its long poll waits gets
// both answers, in order.
func TestLongPollParkedPipelined(t *testing.T) {
	srv, path := pollServer(t, false)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=55")
	awaitPolls(t, srv, 1)
	p.send(t, mediamock.BasePath+"/account")
	require.NoError(t, srv.Advance(time.Hour))
	resp, body := p.answer(t)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"status":"completed"`)
	resp, body = p.answer(t)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"object":"account"`)
}

// pollBudget is what a waiting long poll may cost the process, heap and
// stacks: net/http's way (a goroutine at a deep stack, a watcher, the
// connection's buffers) cost about 36 KB; a parked poll about 10 KB.
const pollBudget = 20 << 10

// A waiting long poll costs little memory and no goroutine of net/http's.
func TestLongPollMemory(t *testing.T) {
	if testkit.Race {
		t.Skip("the race detector changes what memory costs")
	}
	if testing.Short() {
		t.Skip("opens hundreds of connections")
	}
	const n = 100 // with the warm-up, within the workspace's rate window
	srv, path := pollServer(t, true)
	measure := func() (uint64, int) {
		runtime.GC()
		runtime.GC() // stacks shrink at a collection
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse, runtime.NumGoroutine() // live bytes: a collection just ran
	}
	// A few polls first, so that what a server allocates once is paid.
	const warm = 10
	for range warm {
		dialPoll(t, srv).send(t, path+"?wait_seconds=55")
	}
	awaitPolls(t, srv, warm)
	mem0, g0 := measure()
	for range n {
		dialPoll(t, srv).send(t, path+"?wait_seconds=55")
	}
	awaitPolls(t, srv, warm+n)
	mem, g := measure()
	perPoll := (int64(mem) - int64(mem0)) / n
	goroutines := float64(g-g0) / n
	t.Logf("a waiting long poll: %d B of heap and stacks, %.2f goroutines", perPoll, goroutines)
	assert.Less(t, perPoll, int64(pollBudget), "bytes per waiting long poll")
	assert.LessOrEqual(t, goroutines, 2.05, "goroutines per waiting long poll")
	require.NoError(t, srv.Advance(time.Minute)) // the polls end
	awaitPolls(t, srv, 0)
}

// rawAnswer reads an answer as bytes: its head's lines, and its body.
func (p *pollConn) rawAnswer(t testing.TB) ([]string, string) {
	t.Helper()
	p.c.SetReadDeadline(time.Now().Add(testkit.Bound))
	var lines []string
	length := 0
	for {
		line, err := p.br.ReadString('\n')
		require.NoError(t, err)
		if line == "\r\n" {
			break
		}
		lines = append(lines, line)
		if name, value, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && name == "Content-Length" {
			fmt.Sscan(value, &length)
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(p.br, body)
	require.NoError(t, err)
	return lines, string(body)
}

// A parked poll's answer is written as net/http writes any other: the
// same status line and header lines in the same order (their values
// aside: the request id, the rate window, the date: the clock moved).
func TestLongPollParkedWritesWhatNetHTTPWrites(t *testing.T) {
	srv, path := pollServer(t, false)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=55")
	awaitPolls(t, srv, 1)
	require.NoError(t, srv.Advance(time.Hour))
	parked, body := p.rawAnswer(t)
	p.send(t, path+"?wait_seconds=55") // the job has ended: no wait, net/http answers
	direct, body2 := p.rawAnswer(t)
	assert.Equal(t, body2, body)
	names := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			name, value, _ := strings.Cut(l, ": ")
			if name == "X-Request-Id" || name == "X-RateLimit-Remaining" || name == "X-RateLimit-Reset" || name == "Date" {
				value = "…"
			}
			out = append(out, name+": "+value)
		}
		return out
	}
	assert.Equal(t, names(direct), names(parked))
}

// A fault rule added while a long poll waits strikes its answer, as it
// strikes any other: the answer breaks, and the journal says so.
func TestLongPollParkedMeetsAFaultAddedWhileItWaits(t *testing.T) {
	srv, path := pollServer(t, false)
	p := dialPoll(t, srv)
	p.send(t, path+"?wait_seconds=55")
	awaitPolls(t, srv, 1)
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "truncate", Operation: "getGeneration"})
	require.NoError(t, err)
	require.NoError(t, srv.Advance(time.Hour))
	p.c.SetReadDeadline(time.Now().Add(testkit.Bound))
	resp, err := http.ReadResponse(p.br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the body stops short")
	e, ok := journaled(srv, resp.Header.Get("X-Request-Id"))
	require.True(t, ok)
	assert.Equal(t, "truncate", e.Fault)
}

// Go's client keeps the connection a parked poll was answered on, and
// its next request is served on it.
func TestLongPollParkedKeepsTheClientsConnection(t *testing.T) {
	srv, path := pollServer(t, false)
	get := func(query string) (int, bool) {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", srv.URL()+path+query, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, reused
	}
	status, _ := get("") // a connection to keep
	require.Equal(t, http.StatusOK, status)
	polled := make(chan [2]any, 1)
	go func() {
		status, reused := get("?wait_seconds=55")
		polled <- [2]any{status, reused}
	}()
	awaitPolls(t, srv, 1)
	require.NoError(t, srv.Advance(time.Hour))
	got := testkit.Receive(t, polled, "the long poll's answer")
	assert.Equal(t, http.StatusOK, got[0])
	assert.Equal(t, true, got[1], "the poll went on the kept connection")
	status, reused := get("")
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, reused, "the connection the poll was answered on is kept")
}

// The handler served by another server, and a request that may meet a
// fault, wait as before, and are answered all the same.
func TestLongPollUnparkedWaitsAsBefore(t *testing.T) {
	srv, path := pollServer(t, false)
	other := httptest.NewServer(srv.Handler())
	t.Cleanup(other.Close)
	polled := make(chan int, 2)
	poll := func(base string, header ...string) {
		req, _ := http.NewRequest("GET", base+path+"?wait_seconds=55", nil)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		for _, h := range header {
			name, value, _ := strings.Cut(h, ": ")
			req.Header.Set(name, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			polled <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		polled <- resp.StatusCode
	}
	go poll(other.URL)
	go poll(srv.URL(), "Mock-Fault: truncate; after_bytes=10")
	awaitPolls(t, srv, 2)
	require.NoError(t, srv.Advance(time.Hour))
	assert.Equal(t, http.StatusOK, testkit.Receive(t, polled, "an answer"))
	assert.Equal(t, http.StatusOK, testkit.Receive(t, polled, "an answer"))
}
