package check

import (
	"fmt"
	"strconv"
)

// The list rules: a page is newest first (list.order), and a page after a
// cursor holds only what comes after it (list.cursor).

// checkList holds a page to newest first and to its cursor.
func checkList(c *verdict, p *Pending, x *Exchange, body any) {
	m, _ := body.(map[string]any)
	data, ok := m["data"].([]any)
	if !ok {
		return
	}
	c.apply(RuleListOrder, RuleListCursor)
	src := ruleSource[RuleListOrder]
	if d := listOrderDecision[p.opID]; d != "" {
		src = decision(d)
	}
	cursor, hasCursor := int64(0), false
	if v := x.URL.Query().Get("starting_after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		cursor, hasCursor = n, err == nil
	}
	var prev int64
	for i, item := range data {
		obj, _ := item.(map[string]any)
		id, ok := IntOf(obj["id"])
		if !ok {
			continue
		}
		path := fmt.Sprintf("$.data[%d].id", i)
		if i > 0 && id >= prev {
			c.addFrom(RuleListOrder, src, path, "id %d follows id %d: the list is not newest first", id, prev)
		}
		if hasCursor && id >= cursor {
			c.add(RuleListCursor, path, "id %d is on the page after starting_after=%d", id, cursor)
		}
		prev = id
	}
	if more, _ := m["has_more"].(bool); more {
		if _, ok := m["next_cursor"]; !ok {
			c.add(RuleListCursor, "$.next_cursor", "has_more is true but there is no next_cursor")
		}
	}
}
