package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

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

// skimSeeds are resultShapes and the documents the skimmer leaves to
// encoding/json.
var skimSeeds = append(slices.Clone(resultShapes),
	``,
	`{}`,
	`{"object":"list"} x`,
	`{"ID":1}`,
	`{"Object":"list","data":[{"ID":3}]}`,
	`{"\u006fbject":"list"}`,
	`{"id":1,"id":2}`,
	`{"data":[{"id":1,"id":2}]}`,
	`{"error":"text"}`,
	`{"data":[1,2]}`,
	`{"data":[null]}`,
	`{"data":{"id":1}}`,
	`{"video":{"url":"a","URL":"b"}}`,
	`{"object":01}`,
	`{"object":1.}`,
	`{"object":"\x"}`,
	`{"object":"`+"\x01"+`"}`,
	`{"object":tru}`,
	`{"object":"caf`+"\xff"+`"}`,
	`{"kind":"image","status":"completed","covered_by_monthly_gift":true,"unknown":{"deep":[{"id":1}]}}`,
	`{"has_more":true,"next_cursor":"c1","data":[{"id":1,"slug":"s"},{"slug":"t","id":null}]}`,
	`{"x":[{"b":[[],{}]},1,{"c":{"d":[true,{"e":"f"}]}}],"object":"list"}`,
	`{"x":{"b":1,},"object":"list"}`,
	`{"x":[1,],"object":"list"}`,
	`{"x":{1:2}}`,
	`{"x":[1 2]}`,
	`{"x":{"b" 1}}`,
	`{"x":[}`,
	`{"x":{]}`,
	`{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
)

// FuzzSkimDigest holds the skimmer's digest equal to encoding/json's,
// whenever the skimmer reads a document rather than leaving it.
func FuzzSkimDigest(f *testing.F) {
	for _, s := range skimSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok := skim(data)
		if !ok {
			return
		}
		var want digest
		require.NoError(t, json.Unmarshal(data, &want), "%q", data)
		require.Equal(t, &want, d, "%q", data)
	})
}

// TestSkimReadsServerBodies holds that the documents of the server's own
// shapes are read by the skimmer, not left to encoding/json.
func TestSkimReadsServerBodies(t *testing.T) {
	for _, s := range skimSeeds[:14] {
		_, ok := skim([]byte(s))
		require.True(t, ok, s)
	}
}

// TestIDText holds an id's text equal to what decoding it prints.
func TestIDText(t *testing.T) {
	for _, raw := range []string{`0`, `7`, `-7`, `-0`, `120`, `999999999999999`, `1000000000000000`, `12345678901234567890`,
		`1.5`, `1e3`, `3.0`, `"neon-glow"`, `"caf\u00e9"`, `"tab\t"`, `"caf` + "\xff" + `"`, `"é"`, `""`, `null`, `true`, `{"a":1}`, `[1]`} {
		require.Equal(t, fmt.Sprint(num(val(json.RawMessage(raw)))), string(appendIDText(nil, json.RawMessage(raw))), raw)
	}
}

// TestTextContent holds the text content written by hand equal to
// json.Marshal's, and leaves what it cannot write to it.
func TestTextContent(t *testing.T) {
	for _, texts := range [][]string{{"List library assets (200): 20 item(s); ids 3, 2. The full result is the structured content."},
		{"a", "b"}, {""}, {"x <y> & \"z\""}, {"tab\tnew\nline"}, {"café"}, {"del\x7f"}, {"bad \xff"}, {"\u2028"}} {
		content := make([]sdk.Content, len(texts))
		for i, s := range texts {
			content[i] = &sdk.TextContent{Text: s}
		}
		want, err := json.Marshal(content)
		require.NoError(t, err)
		if got, ok := textContent(content); ok {
			require.Equal(t, string(want), string(got), texts)
		} else {
			require.False(t, plainText(strings.Join(texts, "")), texts)
		}
	}
	_, ok := textContent([]sdk.Content{&sdk.TextContent{Text: "a", Meta: sdk.Meta{"k": 1}}})
	require.False(t, ok)
	_, ok = textContent([]sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.ResourceLink{URI: "mediamock://assets/1", Name: "asset-1"}})
	require.False(t, ok)
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

// messageSeeds are messages of every shape the front reads, and the ones
// the skimmer leaves to encoding/json.
var messageSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"create_generation","arguments":{"prompt":"a \"quoted\" lighthouse","count":2,"prompt":"twice"},"_meta":{"progressToken":7}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"mediamock://assets/7"}}`,
	`{"jsonrpc":"2.0","id":3,"result":{}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":3,"result":null}`,
	` {"jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "arguments" : { } } } `,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}},"params":{}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"caf` + "\xc3\xa9" + `"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":2,"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/clientInfo":null}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"\u0061":1}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
	`{"jsonrpc":"2.0","id":1,"method":"x"}` + "\f",
	`{"jsonrpc":"2.0","id":1,"method":"x"`,
	``,
	`null`,
}

// FuzzSkimMessage holds the skimmer's reading of a message equal to
// encoding/json's, whenever the skimmer reads one rather than leaving it.
func FuzzSkimMessage(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := skimMessage(data)
		if !ok {
			return
		}
		want, err := decodeJSON(data)
		require.Nil(t, err, "%q", data)
		require.Equal(t, want, got, "%q", data)
	})
}

// TestSkimReadsMessages holds that the messages clients send are read by
// the skimmer, not left to encoding/json.
func TestSkimReadsMessages(t *testing.T) {
	for _, s := range messageSeeds[:10] {
		_, ok := skimMessage([]byte(s))
		require.True(t, ok, s)
	}
}

// TestPlainRun holds that plainRun never passes over a quote, a backslash
// or a control character, wherever it stands in a word.
func TestPlainRun(t *testing.T) {
	for _, special := range []byte{'"', '\\', 0, 0x1f, '\n'} {
		for _, fill := range []byte{'a', ' ', '!', 0x7f, 0x80, 0xff, '#', '[', ']'} {
			for at := range 24 {
				b := make([]byte, 24)
				for i := range b {
					b[i] = fill
				}
				b[at] = special
				for from := range at + 1 {
					require.LessOrEqual(t, plainRun(b, from), at, "special %q at %d from %d in %q", special, at, from, b)
				}
			}
		}
	}
	require.Equal(t, 16, plainRun([]byte("abcdefghijklmnop\"x"), 0))
}

// TestListDigestIsTheSkimmed holds the digest of a list page made from its
// facts equal to the one its bytes give, for pages of the shape
// listAssetsPage writes (ops.TestListPageFactsAreThePage holds the facts
// equal to the bytes).
func TestListDigestIsTheSkimmed(t *testing.T) {
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
		want, ok := skim([]byte(page))
		require.True(t, ok, page)
		require.Equal(t, want, listDigest(&ops.ListFacts{IDs: tt.ids, More: tt.more}), page)
	}
}

// TestValidID holds validID to what decoding an id as a string or a
// json.Number accepts.
func TestValidID(t *testing.T) {
	for _, id := range []string{`1`, `-1`, `0`, `01`, `1.5`, `1e9`, `-`, `1.`, `.5`, `"a"`, `"a\"b"`, `"\u00e9"`, `"\x"`, `"a`, `"a" `, `1 `, `1 2`,
		`"` + "\x01" + `"`, `""`, `null`, `true`, `{}`, `[]`, ``, `"é"`, `9999999999999999999999`, `-0`, `1E+2`} {
		want := false
		switch {
		case len(id) > 0 && id[0] == '"':
			var s string
			want = json.Unmarshal([]byte(id), &s) == nil
		case len(id) > 0 && strings.ContainsRune("-0123456789", rune(id[0])):
			var n json.Number
			want = json.Unmarshal([]byte(id), &n) == nil
		}
		require.Equal(t, want, validID(json.RawMessage(id)), id)
	}
}
