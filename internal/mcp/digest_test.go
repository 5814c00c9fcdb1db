package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/mcpserver"

	"github.com/mediamock/mediamock/internal/ops"
)

// resultShapes are documents of every shape a tool's result takes (and
// two that are not JSON objects).
var resultShapes = []string{
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
	` { "object" : "list" , "data" : [ { "id" : -1.5e+3 , "x" : [ true , false , null , { } , [ ] ] } ] } `,
	`{"object":"a\"b\\c\/\u00e9\n","title":"\ud83d\ude00 ok","nested":{"a":{"b":[1,[2,[3]]]}}}`,
	`{"error":null,"data":null,"assets":null,"video":null}`,
	`{"assets":[]}`,
	`[1,2]`,
	`not json`,
}

// TestIDText holds an id's text equal to what decoding it prints.
func TestIDText(t *testing.T) {
	for _, raw := range []string{`0`, `7`, `-7`, `-0`, `120`, `999999999999999`, `1000000000000000`, `12345678901234567890`,
		`1.5`, `1e3`, `3.0`, `"neon-glow"`, `"caf\u00e9"`, `"tab\t"`, `"caf` + "\xff" + `"`, `"é"`, `""`, `null`, `true`, `{"a":1}`, `[1]`} {
		require.Equal(t, fmt.Sprint(num(val(json.RawMessage(raw)))), string(appendIDText(nil, json.RawMessage(raw))), raw)
	}
}

// TestText holds an argument's text equal to what decoding it as a
// string, or else its trimmed JSON, gives.
func TestText(t *testing.T) {
	for _, raw := range []string{`20`, ` 20 `, `-1.5e3`, `"x"`, `"a\"b"`, `null`, ` null`, `true`, `{"a":1}`, `[1, 2]`, `"é\u00e9"`, `"bad`, ``, `nul`} {
		want := func() string {
			var s string
			if json.Unmarshal([]byte(raw), &s) == nil {
				return s
			}
			return strings.TrimSpace(raw)
		}()
		require.Equal(t, want, text(json.RawMessage(raw)), raw)
	}
}

// TestListDigestIsTheRead holds the digest of a list page made from its
// facts equal to the one its bytes give, for pages of the shape
// listAssetsPage writes (ops.TestListPageFactsAreThePage holds the facts
// equal to the bytes).
func TestListDigestIsTheRead(t *testing.T) {
	item := func(id uint64) string {
		return fmt.Sprintf(`{"id":%d,"object":"asset","kind":"image","status":"completed","title":"A <b>&","url":"http://127.0.0.1/files/%d.png","metadata":{"width":1024,"tags":["a","b"]},"project_id":null}`, id, id)
	}
	for _, tt := range []struct {
		ids  []uint64
		more bool
	}{{nil, false}, {[]uint64{120, 119, 118}, true}, {[]uint64{3, 2, 1}, false}, {[]uint64{18446744073709551615}, true}, {nil, true}} {
		var items []string
		for _, id := range tt.ids {
			items = append(items, item(id))
		}
		page := `{"object":"list","data":[` + strings.Join(items, ",") + `],"has_more":` + fmt.Sprint(tt.more)
		if tt.more && len(tt.ids) > 0 {
			page += `,"next_cursor":` + fmt.Sprint(tt.ids[len(tt.ids)-1])
		}
		page += "}"
		require.Equal(t, digestOf([]byte(page)), listDigest(&ops.ListFacts{IDs: tt.ids, More: tt.more}), page)
	}
}

// TestListSummaryIsTheDigests holds the summary of a list page made from
// its facts equal to the one its digest gives, or left to the digest.
func TestListSummaryIsTheDigests(t *testing.T) {
	tl := &tool{def: mcpserver.Tool{Title: "List library assets"}}
	for _, l := range []ops.ListFacts{{}, {More: true}, {IDs: []uint64{120, 119, 118}, More: true}, {IDs: []uint64{3, 2, 1}},
		{IDs: []uint64{1}, More: true}, {IDs: []uint64{999999999999999, 7}, More: true}, {IDs: []uint64{1000000000000000}, More: true},
		{IDs: []uint64{18446744073709551615}}} {
		text, ok := listSummary(tl, 200, &l)
		want := summarize(tl, 200, listDigest(&l))
		if ok {
			require.Equal(t, want, text, "%+v", l)
		} else {
			require.Contains(t, want, "e+", "%+v: left to the digest, which prints a float", l)
		}
	}
}
