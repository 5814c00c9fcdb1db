package fanout

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func drain(ch <-chan string) []string {
	var out []string
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, v)
		default:
			return out
		}
	}
}

func TestHub(t *testing.T) {
	var h Hub[string]
	assert.False(t, h.Active())
	h.Publish("nobody listens")

	marker := func(n uint64) string { return fmt.Sprintf("dropped %d", n) }
	small, cancelSmall := h.Subscribe(2, marker)
	big, cancelBig := h.Subscribe(10, marker)
	assert.True(t, h.Active())

	h.Publish("a", "b", "c", "d")
	assert.Equal(t, []string{"a", "b"}, drain(small), "a full buffer drops, the publisher never waits")
	assert.Equal(t, []string{"a", "b", "c", "d"}, drain(big))

	h.Publish("e")
	assert.Equal(t, []string{"dropped 2", "e"}, drain(small), "the marker takes the place of what was lost")
	h.Publish("f")
	assert.Equal(t, []string{"f"}, drain(small), "once said, the loss is forgotten")

	cancelSmall()
	cancelSmall() // twice is harmless
	_, open := <-small
	assert.False(t, open, "cancel closes the channel")
	h.Publish("g")
	assert.Equal(t, []string{"e", "f", "g"}, drain(big))
	cancelBig()
	assert.False(t, h.Active())
}

func TestHubMarkerNeedsRoomToo(t *testing.T) {
	var h Hub[string]
	ch, cancel := h.Subscribe(1, func(n uint64) string { return fmt.Sprintf("dropped %d", n) })
	defer cancel()
	h.Publish("a", "b", "c")
	assert.Equal(t, []string{"a"}, drain(ch))
	h.Publish("d") // the marker fits, d does not: it is counted for the next marker
	assert.Equal(t, []string{"dropped 2"}, drain(ch))
	h.Publish("e")
	assert.Equal(t, []string{"dropped 1"}, drain(ch))
}
