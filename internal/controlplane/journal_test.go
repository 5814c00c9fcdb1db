package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/journal"
)

// writes counts what a writer was given and its largest part.
type writes struct {
	bytes.Buffer
	parts, largest int
}

func (w *writes) Write(p []byte) (int, error) {
	w.parts++
	w.largest = max(w.largest, len(p))
	return w.Buffer.Write(p)
}

// A journal's answer is written as it is read, a page of entries at a
// time, so that a long read never holds the whole answer; what it writes
// is what the whole answer would be.
func TestAJournalReadIsStreamed(t *testing.T) {
	p := newPlane(t, "operator")
	p.Journal = journal.New(5000, 4096)
	body := strings.Repeat("b", 200)
	for range 3000 {
		p.Journal.Add(journal.Entry{ID: "req_x", Front: "rest", Method: "GET", Path: "/api/v1/assets", Status: 200}, []byte(body), []byte(body))
	}
	status, answer, err := p.Invoke(context.Background(), &Call{Op: "getJournal", Authorization: "Bearer operator", Query: map[string][]string{"limit": {"5000"}}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	s, ok := answer.(Stream)
	require.True(t, ok, "a journal's answer is streamed, not a value held whole: %T", answer)
	assert.Equal(t, "application/json", s.ContentType)

	var w writes
	require.NoError(t, s.Write(&w))
	assert.Greater(t, w.parts, 3000/journalPage, "written in pages")
	assert.Less(t, w.largest, w.Len()/20, "no part near the whole answer (%d of %d bytes)", w.largest, w.Len())

	var got struct {
		Size     int             `json:"size"`
		Seq      int64           `json:"seq"`
		Recorded int64           `json:"recorded"`
		Entries  json.RawMessage `json:"entries"`
	}
	require.NoError(t, json.Unmarshal(w.Bytes(), &got))
	assert.Equal(t, 5000, got.Size)
	assert.EqualValues(t, 3000, got.Seq)
	assert.EqualValues(t, 3000, got.Recorded)
	want, err := json.Marshal(p.Journal.List(journal.Filter{Limit: 5000}))
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got.Entries), "the entries a List would give, newest first")

	_, _, data := Encode(status, answer, nil)
	assert.Equal(t, w.String(), string(data), "encoded whole, it is the same bytes")
}
