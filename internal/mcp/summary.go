package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/ops"
)

// digest is what a tool result's text and links are made of, read from the
// operation's JSON without decoding the rest: a page of assets is about
// 9 KB, and decoding it all into maps cost more than the operation itself.
// Each field keeps its raw JSON, so that a field present (even as null)
// can be told from one absent.
type digest struct {
	Error *struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	} `json:"error"`
	Object        json.RawMessage `json:"object"`
	ID            json.RawMessage `json:"id"`
	WorkspaceName json.RawMessage `json:"workspace_name"`
	Plan          json.RawMessage `json:"plan"`
	Status        json.RawMessage `json:"status"`
	Effect        json.RawMessage `json:"effect"`
	Kind          json.RawMessage `json:"kind"`
	Data          []struct {
		ID   json.RawMessage `json:"id"`
		Slug json.RawMessage `json:"slug"`
	} `json:"data"`
	HasMore    json.RawMessage `json:"has_more"`
	NextCursor json.RawMessage `json:"next_cursor"`
	Assets     []struct {
		ID       json.RawMessage `json:"id"`
		Kind     json.RawMessage `json:"kind"`
		Status   json.RawMessage `json:"status"`
		URL      json.RawMessage `json:"url"`
		MimeType json.RawMessage `json:"mime_type"`
	} `json:"assets"`
	Video *struct {
		URL json.RawMessage `json:"url"`
	} `json:"video"`
	URL                  json.RawMessage `json:"url"`
	ShareURL             json.RawMessage `json:"share_url"`
	CreditsCharged       json.RawMessage `json:"credits_charged"`
	CreditsBalance       json.RawMessage `json:"credits_balance"`
	CoveredByMonthlyGift json.RawMessage `json:"covered_by_monthly_gift"`
}

// digestOf reads a result's digest; a value of another type than expected
// is left out, as a map lookup would have found nothing. A list page's
// digest is known without reading it (listDigest): the results read here
// are a record or an error, small.
func digestOf(data []byte) *digest {
	var d digest
	_ = json.Unmarshal(data, &d)
	return &d
}

// listDigest is the digest of a list page of assets from what the page
// says besides its items (ops.ListFacts): the digest reading the page's
// bytes would give (TestListDigestIsTheRead), without reading them.
func listDigest(l *ops.ListFacts) *digest {
	d := &digest{Object: json.RawMessage(`"list"`), HasMore: json.RawMessage("false")}
	if l.More {
		d.HasMore = json.RawMessage("true")
	}
	d.Data = make([]struct {
		ID   json.RawMessage `json:"id"`
		Slug json.RawMessage `json:"slug"`
	}, len(l.IDs))
	nums := make([]byte, 0, len(l.IDs)*8)
	for i, id := range l.IDs {
		start := len(nums)
		nums = strconv.AppendUint(nums, id, 10)
		d.Data[i].ID = nums[start:len(nums):len(nums)]
	}
	if l.More && len(l.IDs) > 0 {
		d.NextCursor = strconv.AppendUint(nil, l.IDs[len(l.IDs)-1], 10)
	}
	return d
}

// listSummary is the summary of a list page of assets from its facts, as
// summarize writes it of listDigest (TestListSummaryIsTheDigests), without
// a digest: false for ids of 16 digits or more, which summarize prints as
// the floats JSON makes of them.
func listSummary(t *tool, status int, l *ops.ListFacts) (string, bool) {
	const exact = 1e15
	b := make([]byte, 0, len(t.def.Title)+96+len(l.IDs)*8)
	b = append(b, t.def.Title...)
	b = strconv.AppendInt(append(b, " ("...), int64(status), 10)
	b = strconv.AppendInt(append(b, "): "...), int64(len(l.IDs)), 10)
	b = append(b, " item(s)"...)
	for i, id := range l.IDs {
		if id >= exact {
			return "", false
		}
		if i == 0 {
			b = append(b, "; ids "...)
		} else {
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(b, id, 10)
	}
	if l.More {
		b = append(b, "; more after next_cursor "...)
		if len(l.IDs) == 0 {
			b = append(b, "<nil>"...)
		} else {
			b = strconv.AppendUint(b, l.IDs[len(l.IDs)-1], 10)
		}
	}
	return string(append(b, ". The full result is the structured content."...)), true
}

// val is a raw JSON value as encoding/json decodes it into any; nil when
// absent or null.
func val(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// present reports whether a field was in the object (null included).
func present(raw json.RawMessage) bool { return len(raw) > 0 }

// notNull reports whether a field was in the object with a value.
func notNull(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// summarize is a tool result's short text: the operation and the facts a
// reader looks for first (ids, statuses, counts, credits, file addresses);
// the whole answer is the structured content. It is written into one
// buffer: a page's twenty ids are not twenty strings joined.
func summarize(t *tool, status int, d *digest) string {
	if d.Error != nil {
		return fmt.Sprintf("Error %d %v: %v", status, val(d.Error.Code), val(d.Error.Message))
	}
	b := make([]byte, 0, 256)
	b = append(b, t.def.Title...)
	b = strconv.AppendInt(append(b, " ("...), int64(status), 10)
	b = append(b, ')')
	facts := 0
	// fact opens the next fact: ": " before the first, "; " between.
	fact := func() {
		if facts == 0 {
			b = append(b, ": "...)
		} else {
			b = append(b, "; "...)
		}
		facts++
	}
	switch {
	case string(d.Object) == `"list"`:
		fact()
		b = append(strconv.AppendInt(b, int64(len(d.Data)), 10), " item(s)"...)
		ids := 0
		for _, item := range d.Data {
			id := item.ID
			if !present(id) {
				id = item.Slug
			}
			if !present(id) {
				continue
			}
			if ids == 0 {
				fact()
				b = append(b, "ids "...)
			} else {
				b = append(b, ", "...)
			}
			ids++
			b = appendIDText(b, id)
		}
		if string(d.HasMore) == "true" {
			fact()
			b = fmt.Appendf(b, "more after next_cursor %v", val(d.NextCursor))
		}
	case d.Assets != nil:
		fact()
		b = fmt.Appendf(b, "generation %v", val(d.Status))
		for _, a := range d.Assets {
			fact()
			b = fmt.Appendf(b, "asset %v %v %v", num(val(a.ID)), val(a.Kind), val(a.Status))
			if notNull(a.URL) {
				b = fmt.Append(append(b, ' '), val(a.URL))
			}
		}
	default:
		for _, f := range []struct {
			key string
			raw json.RawMessage
		}{{"object", d.Object}, {"id", d.ID}, {"workspace_name", d.WorkspaceName}, {"plan", d.Plan},
			{"status", d.Status}, {"effect", d.Effect}, {"kind", d.Kind}} {
			if present(f.raw) {
				fact()
				b = fmt.Appendf(b, "%s %v", f.key, num(val(f.raw)))
			}
		}
		if d.Video != nil && notNull(d.Video.URL) {
			fact()
			b = fmt.Appendf(b, "video %v", val(d.Video.URL))
		} else if notNull(d.URL) {
			fact()
			b = fmt.Appendf(b, "url %v", val(d.URL))
		}
		if notNull(d.ShareURL) {
			fact()
			b = fmt.Appendf(b, "share_url %v", val(d.ShareURL))
		}
	}
	for _, f := range []struct {
		key string
		raw json.RawMessage
	}{{"credits_charged", d.CreditsCharged}, {"credits_balance", d.CreditsBalance}} {
		if present(f.raw) {
			fact()
			b = fmt.Appendf(b, "%s %v", f.key, num(val(f.raw)))
		}
	}
	if string(d.CoveredByMonthlyGift) == "true" {
		fact()
		b = append(b, "covered by a monthly gift"...)
	}
	return string(append(b, ". The full result is the structured content."...))
}

// appendIDText appends an id as the summary prints it,
// fmt.Sprint(num(val(raw))): an integer of up to 15 digits (which a
// float64 holds exactly) and a string without escapes are their own text,
// read without decoding.
func appendIDText(b []byte, raw json.RawMessage) []byte {
	if plainInteger(raw) {
		return append(b, raw...)
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if inner := raw[1 : n-1]; bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) {
			return append(b, inner...)
		}
	}
	return fmt.Append(b, num(val(raw)))
}

// plainInteger reports whether raw is a JSON integer of at most 15 digits
// other than -0.
func plainInteger(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if len(digits) > 0 && digits[0] == '0' {
			return false
		}
	}
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// num prints JSON numbers that are integers without an exponent.
func num(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

// assetLinks links the completed assets of a generation to their resources.
func assetLinks(d *digest) []mcpserver.Content {
	var out []mcpserver.Content
	for _, a := range d.Assets {
		if string(a.Status) != `"completed"` {
			continue
		}
		id := num(val(a.ID))
		mime, _ := val(a.MimeType).(string)
		out = append(out, mcpserver.Content{Type: "resource_link", URI: fmt.Sprintf("%s%v", assetURIPrefix, id), Name: fmt.Sprintf("asset-%v", id),
			Title: fmt.Sprintf("Asset %v (%v)", id, val(a.Kind)), MIMEType: mime})
	}
	return out
}
