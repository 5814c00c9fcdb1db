package journal

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
