package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

func TestSubscribeAndFilterByID(t *testing.T) {
	j := New(4, 8)
	ch, cancel := j.Subscribe(2)
	j.Add(Entry{ID: "req_1", Status: 200}, []byte("request body"), []byte("response"))
	j.Add(Entry{ID: "req_2", Status: 404}, nil, nil)
	j.Add(Entry{ID: "req_3", Status: 500}, nil, nil) // the buffer is full: dropped

	got := <-ch
	assert.Equal(t, "req_1", got.Entry.ID)
	assert.Empty(t, got.Entry.RequestBody, "no bodies on the feed")
	assert.Equal(t, "req_2", (<-ch).Entry.ID)
	j.Add(Entry{ID: "req_4", Status: 201}, nil, nil)
	assert.EqualValues(t, 1, (<-ch).Dropped)
	assert.Equal(t, "req_4", (<-ch).Entry.ID)
	cancel()

	one := j.List(Filter{ID: "req_1"})
	require.Len(t, one, 1)
	assert.Equal(t, "request ", one[0].RequestBody)

	var off *Journal
	none, cancel := off.Subscribe(1)
	assert.Nil(t, none)
	cancel()
	off.Add(Entry{ID: "x"}, nil, nil)
}

// BenchmarkListJSON is a read of a full journal of 500 entries as the
// control API answers it: listed, then encoded.
//
//	go test -run '^$' -bench ListJSON ./internal/journal
func BenchmarkListJSON(b *testing.B) {
	j := New(500, 1024)
	body := []byte(`{"modality":"image","model_id":"imagen-4","prompt":"a benchmark of lighthouses at dusk"}`)
	for range 500 {
		j.Add(stamped(Entry{ID: "req_1", Front: "rest", Method: "POST", Path: "/api/v1/generations", Operation: "createGeneration",
			Status: 201, WorkspaceID: 1, RequestBytes: int64(len(body)), ResponseBytes: int64(len(body))}), body, body)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(j.List(Filter{})); err != nil {
			b.Fatal(err)
		}
	}
}

// stamped is an entry with its times, as the fronts record it.
func stamped(e Entry) Entry {
	e.Time, e.SimTime = time.Now().UTC(), sim.DefaultEpoch.UTC()
	return e
}

// waiting waits (bounded, without sleeping) until n waits are in progress.
func waiting(t *testing.T, j *Journal, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for j.Waiting() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waits in progress, want %d", j.Waiting(), n)
		}
		runtime.Gosched()
	}
}

// TestWaitWakesAtTheMatchingEntry: a wait started before the request
// returns the matching entry as soon as it is recorded, with its number and
// bodies; an entry that does not match leaves it waiting; one recorded
// before the wait but after its After is returned at once; a clear keeps
// the numbers going; the end of the context ends the wait.
func TestWaitWakesAtTheMatchingEntry(t *testing.T) {
	j := New(4, 64)
	j.Add(Entry{ID: "req_1", Operation: "getAccount"}, nil, nil)
	got := make(chan Entry, 1)
	go func() {
		e, ok := j.Wait(context.Background(), Filter{Operation: "createGeneration", After: j.Seq()})
		assert.True(t, ok)
		got <- e
	}()
	waiting(t, j, 1)
	j.Add(Entry{ID: "req_2", Operation: "getAccount"}, nil, nil)
	waiting(t, j, 1) // woke, did not match, waits again
	select {
	case e := <-got:
		t.Fatalf("the wait returned %s, which does not match", e.ID)
	default:
	}
	j.Add(Entry{ID: "req_3", Operation: "createGeneration"}, []byte(`{"prompt":"x"}`), []byte(`{"id":1}`))
	e := <-got
	assert.Equal(t, "req_3", e.ID)
	assert.EqualValues(t, 3, e.Seq)
	assert.Equal(t, `{"prompt":"x"}`, e.RequestBody)
	assert.Zero(t, j.Waiting())

	// Already recorded after After: at once, the oldest first.
	j.Add(Entry{ID: "req_4", Operation: "createGeneration"}, nil, nil)
	e, ok := j.Wait(context.Background(), Filter{Operation: "createGeneration", After: 1})
	require.True(t, ok)
	assert.Equal(t, "req_3", e.ID)

	// A clear forgets the entries, not the numbers.
	j.Clear()
	assert.EqualValues(t, 4, j.Seq())
	j.Add(Entry{ID: "req_5"}, nil, nil)
	e, ok = j.Wait(context.Background(), Filter{After: 4})
	require.True(t, ok)
	assert.Equal(t, "req_5", e.ID)
	assert.EqualValues(t, 5, e.Seq)
	assert.Len(t, j.List(Filter{After: 4}), 1)

	// The context ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() {
		_, ok := j.Wait(ctx, Filter{Operation: "never"})
		done <- ok
	}()
	waiting(t, j, 1)
	cancel()
	assert.False(t, <-done)
	assert.Zero(t, j.Waiting())
}

// BenchmarkThousandWaits: 1,000 waits in progress on one journal, each
// woken by every entry; reports the heap they hold (one channel shared by
// all, no buffer per wait) and the cost of recording an entry while they
// wait.
func BenchmarkThousandWaits(b *testing.B) {
	j := New(500, 4096)
	ctx, cancel := context.WithCancel(context.Background())
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	for range 1000 {
		go func() {
			j.Wait(ctx, Filter{Operation: "never"})
			done <- struct{}{}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for j.Waiting() != 1000 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse) / 1000
	b.ResetTimer()
	for i := range b.N {
		j.Add(Entry{ID: "req", Status: 200 + i%2}, nil, nil)
	}
	b.StopTimer()
	b.ReportMetric(held, "bytes/wait")
	cancel()
	for range 1000 {
		<-done
	}
}

// observed remembers what an observer was told.
type observed struct{ seqs []int64 }

func (o *observed) Observe(e *Entry, p *Parts) { o.seqs = append(o.seqs, e.Seq) }

// A journal numbers its entries one after the other into its ring: an
// entry is found by its number while the ring holds it, pages run back
// with Before, an export reads forward with Since from Start, and an
// observer is told every entry in order, a new one after a clear.
func TestJournalByNumber(t *testing.T) {
	j := New(4, 16)
	var made []*observed
	j.Follow(func() Observer { o := &observed{}; made = append(made, o); return o })
	for i := range 6 {
		j.Keep(Entry{ID: fmt.Sprintf("req_%d", i+1), Status: 200 + i%2}, Parts{Request: []byte("body"),
			RequestHeaders: []byte("Host: h\nAuthorization: Bearer k\n"), ResponseHeaders: []byte("Content-Type: application/json\n")})
	}
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, made[0].seqs, "every entry, in order")
	assert.Equal(t, []string{"", "", "req_3", "req_6", ""}, j.Held([]int64{1, 2, 3, 6, 7}), "the ring holds the last 4")
	assert.Equal(t, 4, j.Count(Filter{}))
	assert.Equal(t, 2, j.Count(Filter{Status: 201}))

	page := j.List(Filter{Before: 5, Limit: 10})
	require.Len(t, page, 2)
	assert.Equal(t, []int64{4, 3}, []int64{page[0].Seq, page[1].Seq}, "newest first, before 5")

	assert.Equal(t, int64(4), j.Start(Filter{}, 2), "the last 2 begin after 4")
	assert.Equal(t, int64(0), j.Start(Filter{}, 0), "no limit: all it holds")
	kept := j.Since(Filter{}, j.Start(Filter{}, 3), 2)
	require.Len(t, kept, 2)
	assert.Equal(t, int64(4), kept[0].Seq)
	assert.Equal(t, "Bearer k", kept[0].RequestHeaders.Get("authorization"))
	assert.Equal(t, "application/json", kept[0].ResponseHeaders.Get("Content-Type"))
	assert.Equal(t, "body", kept[0].RequestBody)
	assert.Len(t, j.Since(Filter{}, 5, 10), 1)

	j.Clear()
	assert.Equal(t, []string{""}, j.Held([]int64{6}), "a cleared journal holds nothing")
	j.Add(Entry{ID: "req_7"}, nil, nil)
	require.Len(t, made, 2, "a new observer after the clear")
	assert.Equal(t, []int64{7}, made[1].seqs)
	assert.Equal(t, []string{"req_7"}, j.Held([]int64{7}))
	assert.Same(t, made[1], j.Observer())
}

func TestAppendHeaders(t *testing.T) {
	h := map[string][]string{"X-B": {"2", "3"}, "Authorization": {"Bearer k"}, "Content-Type": {"application/json"}}
	got := Headers(AppendHeaders(nil, h))
	assert.Equal(t, Headers("Authorization: Bearer k\nContent-Type: application/json\nX-B: 2\nX-B: 3\n"), got, "by name, values in order")
	var names []string
	for n := range got.All() {
		names = append(names, n)
	}
	assert.Equal(t, []string{"Authorization", "Content-Type", "X-B", "X-B"}, names)
	big := map[string][]string{"X-Big": {strings.Repeat("v", MaxHeaderBytes)}, "A": {"1"}}
	assert.Equal(t, "A: 1\n", string(AppendHeaders(nil, big)), "a line past the cap is left out")
}

// Reading a journal a page at a time gives what one List gives, in the
// same order, whatever the page's length, the filter and the ring's wrap.
func TestPagesReadWhatListReads(t *testing.T) {
	j := New(50, 16)
	for i := range 130 { // the ring wraps twice
		front := "rest"
		if i%3 == 0 {
			front = "mcp"
		}
		j.Add(Entry{ID: "req", Front: front, Status: 200 + i%2}, []byte("in"), []byte("out"))
	}
	for _, f := range []Filter{{}, {Front: "mcp"}, {Status: 201}, {Limit: 7}, {Front: "rest", Limit: 30}, {After: 120}} {
		for _, n := range []int{1, 3, 64} {
			var got []Entry
			before, left := j.Seq()+1, f.Limit
			for {
				k := n
				if f.Limit > 0 {
					if left == 0 {
						break
					}
					k = min(k, left)
				}
				page := j.Page(f, before, k, nil)
				if len(page) == 0 {
					break
				}
				got = append(got, page...)
				before, left = page[len(page)-1].Seq, left-len(page)
			}
			want := j.List(f)
			require.Equal(t, len(want), len(got), "filter %+v, pages of %d", f, n)
			assert.Equal(t, want, got, "filter %+v, pages of %d", f, n)
		}
	}
	assert.Empty(t, j.Page(Filter{}, 1, 10, nil), "nothing is numbered before the first entry")
	var off *Journal
	assert.Empty(t, off.Page(Filter{}, 5, 10, nil), "a journal that is off has no pages")
}
