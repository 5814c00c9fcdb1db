package control_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
)

func manual(o *mediamock.Options) { o.Clock = mediamock.ClockManual }

func TestViewsAcrossWorkspaces(t *testing.T) {
	srv := mediamock.RunT(t, manual)
	gen := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`)
	assetID := gen["assets"].([]any)[0].(map[string]any)["id"].(float64)
	testkit.API(t, srv, "GET", "/account", "")

	status, body := testkit.Control(t, srv, "GET", "/workspaces/1", "")
	require.Equal(t, http.StatusOK, status, body)
	ws := testkit.JSON(t, body)
	assert.Equal(t, "Acme Studio", ws["name"])
	rw := ws["rate_window"].(map[string]any)
	assert.EqualValues(t, 2, rw["used"], "two requests so far; reading the window counts none")
	assert.EqualValues(t, 120, rw["limit"])
	assert.Contains(t, body, `"token":"mk_test_all_scopes","masked":"mk_test_…opes"`)
	status, _ = testkit.Control(t, srv, "GET", "/workspaces/99", "")
	assert.Equal(t, http.StatusNotFound, status)

	status, body = testkit.Control(t, srv, "GET", "/jobs?limit=5", "")
	require.Equal(t, http.StatusOK, status, body)
	jobs := testkit.JSON(t, body)["data"].([]any)
	require.Len(t, jobs, 1)
	job := jobs[0].(map[string]any)
	assert.Equal(t, assetID, job["id"])
	assert.Equal(t, "a lighthouse", job["prompt"])
	assert.Equal(t, "imagen-4", job["model"])
	assert.Equal(t, "queued", job["status"])

	srv.Advance(time.Minute)
	status, body = testkit.Control(t, srv, "GET", "/jobs?status=completed&kind=generation", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Len(t, testkit.JSON(t, body)["data"], 1)

	status, body = testkit.Control(t, srv, "GET", "/assets?limit=2", "")
	require.Equal(t, http.StatusOK, status, body)
	page := testkit.JSON(t, body)
	assert.Equal(t, true, page["has_more"])
	first := page["data"].([]any)[0].(map[string]any)
	assert.Equal(t, assetID, first["id"])
	assert.Equal(t, first["url"], first["thumbnail_url"])
	status, body = testkit.Control(t, srv, "GET", fmt.Sprintf("/assets?limit=2&starting_after=%v", page["next_cursor"]), "")
	require.Equal(t, http.StatusOK, status, body)
	status, body = testkit.Control(t, srv, "GET", "/assets?workspace_id=3&kind=audio&status=completed&query=northwind", "")
	require.Equal(t, http.StatusOK, status, body)
	for _, a := range testkit.JSON(t, body)["data"].([]any) {
		assert.EqualValues(t, 3, a.(map[string]any)["workspace_id"])
	}
	status, body = testkit.Control(t, srv, "GET", "/assets?kind=sculpture", "")
	assert.Equal(t, http.StatusBadRequest, status, body)

	testkit.API(t, srv, "POST", "/social/publications", fmt.Sprintf(`{"asset_ids":[%v],"caption":"hi","platforms":["instagram"]}`, assetID))
	status, body = testkit.Control(t, srv, "GET", "/publications?status=publishing", "")
	require.Equal(t, http.StatusOK, status, body)
	pubs := testkit.JSON(t, body)["data"].([]any)
	require.Len(t, pubs, 1)
	assert.EqualValues(t, 1, pubs[0].(map[string]any)["workspace_id"])

	// The journal finds one request by its id.
	status, body = testkit.Control(t, srv, "GET", "/journal?limit=1", "")
	require.Equal(t, http.StatusOK, status)
	id := testkit.JSON(t, body)["entries"].([]any)[0].(map[string]any)["id"].(string)
	status, body = testkit.Control(t, srv, "GET", "/journal?id="+id, "")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, testkit.JSON(t, body)["entries"], 1)
}

// events reads server-sent events from a stream.
type events struct {
	sc    *bufio.Scanner
	bytes int
}

type event struct {
	name string
	data map[string]any
}

func openEvents(t *testing.T, srv *mediamock.Server, query string) *events {
	t.Helper()
	return openEventsFrom(t, srv, srv.Client(), query)
}

func openEventsFrom(t *testing.T, srv *mediamock.Server, client *http.Client, query string) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/_mock/events"+query, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ev := &events{sc: bufio.NewScanner(resp.Body)}
	ev.sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := ev.next(t)
	require.Equal(t, "ready", first.name)
	return ev
}

// next reads the next event; the stream's context ends the read if the
// server never sends one.
func (e *events) next(t *testing.T) event {
	t.Helper()
	var ev event
	for e.sc.Scan() {
		line := e.sc.Text()
		e.bytes += len(line) + 1
		switch {
		case line == "" && ev.name != "":
			return ev
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data), line)
			require.Equal(t, ev.name, ev.data["type"])
		}
	}
	t.Fatalf("the stream ended: %v", e.sc.Err())
	return ev
}

// until reads events until one matches, returning those read.
func (e *events) until(t *testing.T, match func(event) bool) []event {
	t.Helper()
	var seen []event
	for {
		ev := e.next(t)
		seen = append(seen, ev)
		if match(ev) {
			return seen
		}
	}
}

func TestEventStream(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.ControlToken = "s3cret" })
	resp, err := http.Get(srv.URL() + "/_mock/events")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the stream needs the token too")
	status, _ := testkit.Control(t, srv, "GET", "/clock?token=s3cret", "")
	assert.Equal(t, http.StatusUnauthorized, status, "only the stream takes the token as a parameter")

	ev := openEvents(t, srv, "?token=s3cret")
	gen := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`)
	id := gen["assets"].([]any)[0].(map[string]any)["id"]
	seen := ev.until(t, func(e event) bool { return e.name == "journal" })
	names := []string{}
	for _, e := range seen {
		names = append(names, e.name)
	}
	assert.Equal(t, []string{"ledger", "job", "journal"}, names, "the commit's changes, then the request as recorded")
	assert.Equal(t, id, seen[1].data["id"])
	assert.Equal(t, "queued", seen[1].data["status"])
	assert.Equal(t, "charge", seen[0].data["entry"].(map[string]any)["type"])
	assert.Equal(t, "createGeneration", seen[2].data["entry"].(map[string]any)["operation"])

	testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"1m"}`, "Authorization", "Bearer s3cret")
	seen = ev.until(t, func(e event) bool { return e.name == "job" && e.data["status"] == "completed" })
	assert.Equal(t, "clock", seen[0].name)
	assert.Equal(t, "2026-01-05T09:01:00+00:00", seen[0].data["now"])
	assert.Nil(t, seen[0].data["next_event_at"], "what the jump made due is applied: nothing is left")
	assert.Equal(t, "processing", seen[1].data["status"])

	testkit.Control(t, srv, "POST", "/reset", ``, "Authorization", "Bearer s3cret")
	ev.until(t, func(e event) bool { return e.name == "reset" })
}

// closedForAnother reads the stream up to its next event or its end: true
// when it ended, told it made room for another stream.
func (e *events) closedForAnother(t *testing.T) bool {
	t.Helper()
	told := false
	for e.sc.Scan() {
		line := e.sc.Text()
		switch {
		case strings.HasPrefix(line, ": closed: "):
			told = true
		case strings.HasPrefix(line, "event: "):
			return false
		}
	}
	return told
}

// clientFrom is a client whose connections come from ip, a loopback
// address of its own: another client to the server.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	if c, err := d.Dial("tcp", "127.0.0.1:1"); err != nil && strings.Contains(err.Error(), "assign requested address") {
		t.Skipf("no loopback address %s here: %v", ip, err)
	} else if c != nil {
		c.Close()
	}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestEventStreamSlotsAreShared: one client address holds at most
// MaxStreamsPerClient streams, its next one closing its own oldest; when
// every slot is taken, a client with fewer streams closes the oldest of
// the biggest holder. No client is refused, none holds every slot.
func TestEventStreamSlotsAreShared(t *testing.T) {
	srv := mediamock.RunT(t, manual)
	var clients []*http.Client
	for i := 1; i <= control.MaxStreams/control.MaxStreamsPerClient+1; i++ {
		clients = append(clients, clientFrom(t, fmt.Sprintf("127.0.0.%d", i)))
	}
	var first []*events // the streams of the first client, oldest first
	for range control.MaxStreamsPerClient + 1 {
		first = append(first, openEventsFrom(t, srv, clients[0], ""))
	}
	var others []*events
	for _, c := range clients[1 : len(clients)-1] {
		for range control.MaxStreamsPerClient {
			others = append(others, openEventsFrom(t, srv, c, ""))
		}
	}
	// Every slot is taken: a newcomer still gets one.
	late := openEventsFrom(t, srv, clients[len(clients)-1], "")

	testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"1m"}`)
	assert.True(t, first[0].closedForAnother(t), "the first client's oldest made room for its ninth")
	assert.True(t, first[1].closedForAnother(t), "its next oldest made room for the newcomer: it held the most, longest")
	for i, ev := range append(append(first[2:], others...), late) {
		assert.False(t, ev.closedForAnother(t), "stream %d stays open and sees the clock", i)
	}
}

func TestEventStreamNeedsAnEnd(t *testing.T) {
	srv := mediamock.RunT(t)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/_mock/events", nil))
	assert.Equal(t, http.StatusBadRequest, rec.Code, "a stream nothing could end is refused")
	assert.Contains(t, rec.Body.String(), "stream_needs_cancel")
}

// TestEventStreamCost measures what 100 jobs moving cost the stream:
// events and bytes, for the record (go test -v -run Cost).
func TestEventStreamCost(t *testing.T) {
	srv := mediamock.RunT(t, manual)
	ev := openEvents(t, srv, "")
	ctx := context.Background()
	p, ok := srv.Engine().Authenticate(mediamock.KeyBusiness)
	require.True(t, ok)
	ev.bytes = 0
	const jobs = 100
	for range jobs {
		_, err := srv.Engine().CreateGeneration(ctx, p, generation)
		require.NoError(t, err)
	}
	srv.Advance(time.Hour)
	counts := map[string]int{}
	completed := 0
	for completed < jobs {
		e := ev.next(t)
		counts[e.name]++
		if e.name == "job" && e.data["status"] == "completed" {
			completed++
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	assert.Equal(t, map[string]int{"ledger": jobs, "job": 3 * jobs, "clock": 1}, counts)
	t.Logf("%d jobs moving: %d events (%v), %d bytes, %.0f bytes per event", jobs, total, counts, ev.bytes, float64(ev.bytes)/float64(total))
}

var generation = sim.GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a stream of lighthouses"}

// BenchmarkEventStream is the cost of 100 jobs created and run to
// completion with no event stream open and with one that a client reads
// (the writer's share, the stream's encoding and the bytes on the wire).
func BenchmarkEventStream(b *testing.B) {
	for _, streams := range []int{0, 1} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			srv := mediamock.RunT(b, manual)
			p, _ := srv.Engine().Authenticate(mediamock.KeyBusiness)
			if _, err := srv.Engine().GrantCredits(p.WorkspaceID, 1<<40, "bench"); err != nil {
				b.Fatal(err)
			}
			done := make(chan struct{}, 1024)
			var bytes, events atomic.Int64
			if streams > 0 {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/_mock/events", nil)
				resp, err := srv.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				for ready := false; sc.Scan(); { // the ready event comes once subscribed
					if ready = ready || sc.Text() == "event: ready"; ready && sc.Text() == "" {
						break
					}
				}
				go func() {
					for sc.Scan() {
						line := sc.Text()
						bytes.Add(int64(len(line) + 1))
						if strings.HasPrefix(line, "event: ") {
							events.Add(1)
						}
						if strings.HasPrefix(line, `data: {"type":"job"`) && strings.Contains(line, `"status":"completed"`) {
							done <- struct{}{}
						}
					}
				}()
			}
			b.ReportAllocs()
			for b.Loop() {
				for range 100 {
					if _, err := srv.Engine().CreateGeneration(context.Background(), p, generation); err != nil {
						b.Fatal(err)
					}
				}
				srv.Advance(time.Hour)
				if streams > 0 {
					for range 100 {
						<-done
					}
				}
			}
			if streams > 0 {
				b.ReportMetric(float64(bytes.Load())/float64(b.N), "stream-bytes/op")
				b.ReportMetric(float64(events.Load())/float64(b.N), "events/op")
			}
		})
	}
}
