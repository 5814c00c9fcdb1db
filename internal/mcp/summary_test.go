package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/mcpserver"
)

// TestDigestSummaryMatchesMaps holds the text and links read through the
// digest equal to those of a full decode into maps (the reference kept
// below), for each shape of result.
func TestDigestSummaryMatchesMaps(t *testing.T) {
	tl := &tool{def: mcpserver.Tool{Title: "A tool"}}
	for _, s := range resultShapes {
		var v any
		_ = json.Unmarshal([]byte(s), &v)
		d := digestOf([]byte(s))
		require.Equal(t, summarizeAny(tl, 200, v), summarize(tl, 200, d), s)
		require.Equal(t, assetLinksAny(v), assetLinks(d), s)
	}
}

func summarizeAny(t *tool, status int, v any) string {
	m, _ := v.(map[string]any)
	if e, ok := m["error"].(map[string]any); ok {
		return fmt.Sprintf("Error %d %v: %v", status, e["code"], e["message"])
	}
	var facts []string
	add := func(format string, args ...any) { facts = append(facts, fmt.Sprintf(format, args...)) }
	switch {
	case m["object"] == "list":
		data, _ := m["data"].([]any)
		add("%d item(s)", len(data))
		var ids []string
		for _, x := range data {
			if item, ok := x.(map[string]any); ok {
				if id := firstAny(item, "id", "slug"); id != nil {
					ids = append(ids, fmt.Sprint(id))
				}
			}
		}
		if len(ids) > 0 {
			add("ids %s", strings.Join(ids, ", "))
		}
		if m["has_more"] == true {
			add("more after next_cursor %v", m["next_cursor"])
		}
	case m["assets"] != nil:
		add("generation %v", m["status"])
		assets, _ := m["assets"].([]any)
		for _, x := range assets {
			if a, ok := x.(map[string]any); ok {
				s := fmt.Sprintf("asset %v %v %v", num(a["id"]), a["kind"], a["status"])
				if a["url"] != nil {
					s += " " + fmt.Sprint(a["url"])
				}
				facts = append(facts, s)
			}
		}
	default:
		for _, key := range []string{"object", "id", "workspace_name", "plan", "status", "effect", "kind"} {
			if x, ok := m[key]; ok {
				add("%s %v", key, num(x))
			}
		}
		if video, ok := m["video"].(map[string]any); ok && video["url"] != nil {
			add("video %v", video["url"])
		} else if m["url"] != nil {
			add("url %v", m["url"])
		}
		if share := m["share_url"]; share != nil {
			add("share_url %v", share)
		}
	}
	for _, key := range []string{"credits_charged", "credits_balance"} {
		if x, ok := m[key]; ok {
			add("%s %v", key, num(x))
		}
	}
	if m["covered_by_monthly_gift"] == true {
		add("covered by a monthly gift")
	}
	text := fmt.Sprintf("%s (%d)", t.def.Title, status)
	if len(facts) > 0 {
		text += ": " + strings.Join(facts, "; ")
	}
	return text + ". The full result is the structured content."
}

func firstAny(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return num(v)
		}
	}
	return nil
}

// assetLinks links the completed assets of a generation to their resources.
func assetLinksAny(v any) []mcpserver.Content {
	m, _ := v.(map[string]any)
	assets, _ := m["assets"].([]any)
	var out []mcpserver.Content
	for _, x := range assets {
		a, ok := x.(map[string]any)
		if !ok || a["status"] != "completed" {
			continue
		}
		id := num(a["id"])
		mime, _ := a["mime_type"].(string)
		out = append(out, mcpserver.Content{Type: "resource_link", URI: fmt.Sprintf("%s%v", assetURIPrefix, id), Name: fmt.Sprintf("asset-%v", id),
			Title: fmt.Sprintf("Asset %v (%v)", id, a["kind"]), MIMEType: mime})
	}
	return out
}
