package wire

import (
	"bytes"
	"sync"
)

// Rendered keeps the JSON of final assets (completed or failed): they never
// change within an epoch of the state, so a list page is mostly a
// concatenation. Entries are per public base address, since file URLs are
// absolute. The zero value is ready.
type Rendered struct {
	mu sync.RWMutex
	m  map[RenderKey][]byte
}

// RenderKey names one rendering of an asset.
type RenderKey struct {
	ID, Epoch uint64
	Base      string
}

// maxRendered bounds the cache: about 500 bytes an entry.
const maxRendered = 16384

// Get returns a rendering, if kept.
func (c *Rendered) Get(k RenderKey) ([]byte, bool) {
	c.mu.RLock()
	b, ok := c.m[k]
	c.mu.RUnlock()
	return b, ok
}

// Put keeps a rendering; when the cache is full it starts again.
func (c *Rendered) Put(k RenderKey, b []byte) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxRendered {
		c.m = make(map[RenderKey][]byte, 1024)
	}
	c.m[k] = b
	c.mu.Unlock()
}

// RawJSON is a body already encoded as JSON (with its final newline). Fronts
// send it as it is; encoders embed it.
type RawJSON []byte

// MarshalJSON returns the encoded value.
func (r RawJSON) MarshalJSON() ([]byte, error) { return bytes.TrimSuffix(r, []byte("\n")), nil }

// pagePool holds the buffers list pages are built in (as *[]byte): a page
// of 20 assets is about 9 KB, and under load a fresh one per request is most
// of what the collector has to do.
var pagePool sync.Pool

// maxPooled is the largest buffer kept: a page of a hundred large assets.
const maxPooled = 128 << 10

// PageBuffer returns an empty buffer of at least size bytes, from the pool
// when it has one.
func PageBuffer(size int) []byte {
	if p, ok := pagePool.Get().(*[]byte); ok && cap(*p) >= size {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// ReleasePage gives back a page's buffer once it has been written; nothing
// may hold it after.
func ReleasePage(b RawJSON) {
	if cap(b) == 0 || cap(b) > maxPooled {
		return
	}
	s := []byte(b[:0])
	pagePool.Put(&s)
}
