package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestDigestSummaryMatchesMaps holds the text and links read through the
// digest equal to those of a full decode into maps (the reference kept
// below), for each shape of result.
func TestDigestSummaryMatchesMaps(t *testing.T) {
	samples := []string{
		`{"object":"list","data":[{"id":3,"object":"asset","status":"completed"},{"id":2},{"slug":"neon-glow"}],"has_more":true,"next_cursor":2}`,
		`{"object":"list","data":[],"has_more":false}`,
		`{"object":"generation","status":"queued","assets":[{"id":10061,"kind":"image","status":"queued","url":null}],"credits_charged":6,"credits_balance":994,"covered_by_monthly_gift":false}`,
		`{"object":"generation","status":"completed","assets":[{"id":7,"kind":"video","status":"completed","url":"http://x/files/7.mp4","mime_type":"video/mp4"},{"id":8,"kind":"image","status":"failed"}],"credits_charged":0,"covered_by_monthly_gift":true}`,
		`{"error":{"code":"insufficient_credits","message":"Not enough credits.","details":{"needed":5}}}`,
		`{"object":"account","workspace_name":"Acme Studio","plan":"pro","credits_balance":1200.5}`,
		`{"object":"encore_creation","id":4,"status":"completed","effect":"neon-glow","video":{"url":"http://x/files/4.mp4"},"credits_charged":3}`,
		`{"object":"encore_creation","id":5,"status":"queued","effect":"neon-glow","video":null,"url":null}`,
		`{"object":"publication","id":9,"status":"published","share_url":"https://tiktok.example/9","kind":null}`,
		`{"object":"asset","id":1e3,"url":"http://x/files/1000.png"}`,
		`[1,2]`,
		`not json`,
	}
	tl := &tool{def: &sdk.Tool{Title: "A tool"}}
	for _, s := range samples {
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
func assetLinksAny(v any) []sdk.Content {
	m, _ := v.(map[string]any)
	assets, _ := m["assets"].([]any)
	var out []sdk.Content
	for _, x := range assets {
		a, ok := x.(map[string]any)
		if !ok || a["status"] != "completed" {
			continue
		}
		id := num(a["id"])
		mime, _ := a["mime_type"].(string)
		out = append(out, &sdk.ResourceLink{URI: fmt.Sprintf("%s%v", assetURIPrefix, id), Name: fmt.Sprintf("asset-%v", id),
			Title: fmt.Sprintf("Asset %v (%v)", id, a["kind"]), MIMEType: mime})
	}
	return out
}
