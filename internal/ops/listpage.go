package ops

import (
	"net/http"
	"strconv"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// listAssetsPage answers GET /assets: the list envelope, byte for byte what
// encoding a wire.List would give, with final assets from the renderings
// the server keeps.
func listAssetsPage(c *Call, q sim.AssetQuery) (int, any, error) {
	view, epoch := c.View, c.eng().Renders()
	cache := &c.Env.Rendered
	// Signed file addresses change with the clock: they are never kept.
	keep := view.Sign == nil
	// The renderings found while listing, in the order of the ids: each
	// is looked up once.
	type found struct {
		id uint64
		b  []byte
	}
	var kept []found
	if keep {
		kept = make([]found, 0, q.Limit+1)
	}
	ids, assets, more, err := c.eng().ListAssetsSkipping(c.Principal, q, func(id uint64) bool {
		if !keep {
			return false
		}
		b, ok := cache.Get(wire.RenderKey{ID: id, Epoch: epoch, Base: view.Base})
		kept = append(kept, found{id, b})
		return ok
	})
	if err != nil {
		return 0, nil, err
	}
	out := wire.PageBuffer(64 + len(ids)*560)
	out = append(out, `{"object":"list","data":[`...)
	for i, id := range ids {
		if i > 0 {
			out = append(out, ',')
		}
		k := wire.RenderKey{ID: id, Epoch: epoch, Base: view.Base}
		var a sim.Asset
		if assets != nil {
			a = assets[i]
		}
		if a.ID == 0 {
			if i < len(kept) && kept[i].id == id && kept[i].b != nil {
				out = append(out, kept[i].b...)
				continue
			}
			if b, ok := cache.Get(k); ok {
				out = append(out, b...)
				continue
			}
			// Dropped from the cache since the listing: read it again.
			if a, err = c.eng().AssetByID(id); err != nil {
				return 0, nil, err
			}
		}
		b, err := wire.Encode(view.Asset(a))
		if err != nil {
			return 0, nil, err
		}
		if keep && sim.Final(a.Status) {
			cache.Put(k, b)
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
	return http.StatusOK, listPage{RawJSON: out, ids: ids, more: more}, nil
}

// listPage is a list page of assets with what a tool result reads of it
// (ListFacts): Invoke takes the page as the body, and keeps the facts.
type listPage struct {
	wire.RawJSON
	ids  []uint64
	more bool
}

// ListFacts are what a list page of assets says besides the assets: the
// ids of its items, in order, and whether more follow (has_more; then
// next_cursor is the last id).
type ListFacts struct {
	IDs  []uint64
	More bool
}
