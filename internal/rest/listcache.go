package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/mediamock/mediamock/sim"
)

// rendered keeps the JSON of final assets (completed or failed): they never
// change within an epoch of the state, so a list page is mostly a
// concatenation. Entries are per public base address, since file URLs are
// absolute.
type rendered struct {
	mu sync.RWMutex
	m  map[renderKey][]byte
}

type renderKey struct {
	id, epoch uint64
	base      string
}

// maxRendered bounds the cache: about 500 bytes an entry.
const maxRendered = 16384

func (c *rendered) get(k renderKey) ([]byte, bool) {
	c.mu.RLock()
	b, ok := c.m[k]
	c.mu.RUnlock()
	return b, ok
}

func (c *rendered) put(k renderKey, b []byte) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxRendered {
		c.m = make(map[renderKey][]byte, 1024)
	}
	c.m[k] = b
	c.mu.Unlock()
}

// encode renders v as the JSON encoder of WriteJSON would inside a larger
// value: no HTML escaping, no trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// listAssetsPage answers GET /assets: the list envelope, byte for byte what
// encoding the wire.List would give, with final assets from the cache.
func listAssetsPage(c *call, q sim.AssetQuery) (int, any, error) {
	view, epoch := c.view(), c.eng().Epoch()
	cache := &c.f.rendered
	ids, assets, more, err := c.eng().ListAssetsSkipping(c.p, q, func(id uint64) bool {
		_, ok := cache.get(renderKey{id, epoch, view.Base})
		return ok
	})
	if err != nil {
		return 0, nil, err
	}
	out := make([]byte, 0, 64+len(ids)*560)
	out = append(out, `{"object":"list","data":[`...)
	for i, id := range ids {
		if i > 0 {
			out = append(out, ',')
		}
		k := renderKey{id, epoch, view.Base}
		if assets[i].ID == 0 {
			b, ok := cache.get(k)
			if !ok { // evicted since the listing: read it again
				a, err := c.eng().AssetByID(id)
				if err != nil {
					return 0, nil, err
				}
				assets[i] = a
			} else {
				out = append(out, b...)
				continue
			}
		}
		b, err := encode(view.Asset(assets[i]))
		if err != nil {
			return 0, nil, err
		}
		if sim.Final(assets[i].Status) {
			cache.put(k, b)
		}
		out = append(out, b...)
	}
	out = append(out, `],"has_more":`...)
	out = strconv.AppendBool(out, more)
	if more && len(ids) > 0 {
		out = append(out, `,"next_cursor":`...)
		out = strconv.AppendUint(out, ids[len(ids)-1], 10)
	}
	out = append(out, "}\n"...)
	return http.StatusOK, rawJSON(out), nil
}

// rawJSON is a body already encoded.
type rawJSON []byte
