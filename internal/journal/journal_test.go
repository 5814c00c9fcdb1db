package journal

import (
	"encoding/json"
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
