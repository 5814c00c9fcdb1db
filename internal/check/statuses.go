package check

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The status.forward rule: an asset's or a creation's status never moves
// back from what an earlier exchange showed (queued, processing, then
// completed or failed).

var statusRank = map[string]int{"queued": 0, "processing": 1, "completed": 2, "failed": 2}

// checkStatuses holds every asset and Encore creation in a body to the
// statuses shown for it by exchanges that ended before this one began.
func (k *Checker) checkStatuses(c *verdict, p *Pending, g *group, body any, end uint64) {
	walkStatuses(body, "$", func(key, status, path string) {
		rank, ok := statusRank[status]
		if !ok {
			return
		}
		c.apply(RuleStatusOrder)
		st := g.statuses[key]
		if st == nil {
			st = &statusSeen{}
			g.statuses[key] = st
		}
		name := strings.Replace(key, ":", " ", 1)
		for r := 2; r > rank; r-- {
			if st.firstEnd[r] != 0 && st.firstEnd[r] < p.begin {
				was := map[int]string{1: "processing", 2: st.final}[r]
				c.add(RuleStatusOrder, path, "%s was %s in an earlier answer; now it is %s: a status never moves back", name, was, status)
				break
			}
		}
		if rank == 2 && st.final != "" && st.final != status && st.finalEnd < p.begin {
			c.add(RuleStatusOrder, path, "%s was %s in an earlier answer; now it is %s: a final status never changes", name, st.final, status)
		}
		if st.firstEnd[rank] == 0 {
			st.firstEnd[rank] = end
		}
		if rank == 2 {
			if st.final == "" {
				st.final, st.finalEnd = status, end
			}
			delete(g.pending, key)
		} else {
			g.pending[key] = true
		}
	})
}

// walkStatuses calls fn for every asset and Encore creation in a body, in
// a fixed order.
func walkStatuses(v any, path string, fn func(key, status, path string)) {
	switch t := v.(type) {
	case map[string]any:
		obj, _ := t["object"].(string)
		status, isString := t["status"].(string)
		if id, ok := IntOf(t["id"]); ok && isString && (obj == "asset" || obj == "encore_creation") {
			fn(obj+":"+strconv.FormatInt(id, 10), status, path+".status")
		}
		var keys []string // of the values that may hold more
		for key, v := range t {
			switch v.(type) {
			case map[string]any, []any:
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		for _, key := range keys {
			walkStatuses(t[key], path+"."+key, fn)
		}
	case []any:
		for i, item := range t {
			walkStatuses(item, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}
