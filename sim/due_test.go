package sim

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Due events are stored with the name of their kind: a state file written
// by an older version must still read, so the names never change, and
// every kind has its step.
func TestEventKindsKeepTheirStoredNames(t *testing.T) {
	stored := map[EventKind]string{
		EventJobProcess: "job.process",
		EventJobFinish:  "job.finish",
		EventPubStart:   "pub.start",
		EventPubDeliver: "pub.deliver",
	}
	require.Len(t, eventSteps, len(stored), "each kind of event has one step, and each step a stored name here")
	for kind, name := range stored {
		assert.Contains(t, eventSteps, kind)
		b, err := json.Marshal(Event{Kind: kind, ID: 7, Sub: 1})
		require.NoError(t, err)
		assert.JSONEq(t, `{"kind":"`+name+`","id":7,"sub":1}`, string(b))
		var ev Event
		require.NoError(t, jsonUnmarshal([]byte(`{"kind":"`+name+`","id":7}`), &ev))
		assert.Equal(t, kind, ev.Kind)
	}
}
