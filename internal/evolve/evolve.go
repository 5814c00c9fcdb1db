// Package evolve rehearses the service's next additive release on an
// answer: the changes a provider ships in a minor version and calls
// non-breaking, applied to the bytes on their way out, never to the
// simulation's state.
//
//	out, added := evolve.Body(body, 200, evolve.All(), rng)
//	added = append(added, evolve.Headers(w.Header(), evolve.All(), rng)...)
//
// What it does, each part drawn from rng, so the same draws give the same
// bytes:
//
//   - fields: every object of the body gains one field the document does
//     not declare, named and valued from NewFields (strings, numbers,
//     booleans, null, an array, a nested object);
//   - enums: one value of each evolvable enum in the body is replaced by a
//     value the document does not list: a job's status that is still
//     running (queued, processing) becomes "moderating", a publication's or
//     delivery's (scheduled, publishing) "awaiting_review", an asset kind
//     "sticker", a modality "avatar", and the error object's code a more
//     specific code of the same status (ErrorCodes). A terminal status
//     never changes, so a client that polls on meets the terminal value;
//   - headers: one or more headers the document does not declare
//     (NewHeaders);
//   - reorder: the keys of every object are shuffled.
//
// Nothing declared goes away and no declared value changes type: the
// evolved answer is valid against the document with its enums open.
package evolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/seed"
)

// Options choose what evolves; All turns everything on.
type Options struct {
	Fields  bool // unknown fields in every object
	Enums   bool // unknown values of status, kind, modality and the error code
	Headers bool // undeclared response headers
	Reorder bool // object keys shuffled
}

// All is every evolution.
func All() Options { return Options{Fields: true, Enums: true, Headers: true, Reorder: true} }

// Field is a field a future release might add, with its value as JSON.
type Field struct {
	Name  string
	Value string
}

// NewFields are the fields an object may gain: realistic names no
// version of the document declares, of every JSON type.
var NewFields = []Field{
	{"safety_rating", `"general"`},
	{"region", `"eu-west-1"`},
	{"watermarked", `false`},
	{"processing_ms", `1840`},
	{"cost_estimate", `1.5`},
	{"labels", `["beta"]`},
	{"provenance", `{"c2pa":true,"issuer":"mediamock"}`},
	{"archived_at", `null`},
}

// Header is a response header a future release might add.
type Header struct {
	Name  string
	Value string
}

// NewHeaders are the headers an answer may gain: none is declared by the
// document.
var NewHeaders = []Header{
	{"X-Service-Region", "eu-west-1"},
	{"X-Api-Minor-Version", "1.1"},
	{"Server-Timing", "model;dur=1840"},
}

// Enum values a future release might add, by the field that carries them.
const (
	NewJobStatus         = "moderating"      // between processing and completed
	NewPublicationStatus = "awaiting_review" // between scheduled and published
	NewKind              = "sticker"
	NewModality          = "avatar"
)

// ErrorCodes are the error codes a future release might add, by HTTP
// status: a more specific code for a case the old code covered. A status
// not listed takes DefaultErrorCode.
var ErrorCodes = map[int]string{
	400: "prompt_rejected",
	401: "token_revoked",
	402: "credits_on_hold",
	403: "region_restricted",
	404: "resource_archived",
	409: "conflict_pending",
	413: "payload_too_large_for_plan",
	415: "unsupported_encoding",
	429: "concurrency_limit_exceeded",
	500: "upstream_model_error",
	503: "model_overloaded",
}

// DefaultErrorCode is the new error code of a status ErrorCodes does not list.
const DefaultErrorCode = "request_rejected"

// Enum sets of the document that evolve.
var (
	runningJob         = []string{"queued", "processing"}
	runningPublication = []string{"scheduled", "publishing"}
	assetKinds         = []string{"image", "video", "voice", "music", "audio", "model3d", "upload"}
	modalities         = []string{"image", "video", "audio", "3d"}
)

// MaxAdded caps the list of what was added that Body returns: a long list
// ends with "... and N more".
const MaxAdded = 64

// Body evolves a JSON body answered with status. A body that is not JSON
// comes back as it is, with nothing added. added names each change: a
// field by its path ($.assets[0].safety_rating), an enum value by its path
// and values ($.status: moderating (was processing)), and "keys reordered".
func Body(body []byte, status int, o Options, rng *seed.RNG) (out []byte, added []string) {
	if !o.Fields && !o.Enums && !o.Reorder {
		return body, nil
	}
	root, err := parse(body)
	if err != nil {
		return body, nil
	}
	e := &evolution{rng: rng}
	if o.Enums {
		e.enums(root, status)
	}
	if o.Fields {
		e.fields(root, "$")
	}
	if o.Reorder && e.reorder(root) {
		e.added = append(e.added, "keys reordered")
	}
	var b bytes.Buffer
	b.Grow(len(body) + 64)
	root.write(&b)
	if len(e.added) > MaxAdded {
		e.added = append(e.added[:MaxAdded-1], "... and "+strconv.Itoa(len(e.added)-MaxAdded+1)+" more")
	}
	return b.Bytes(), e.added
}

// Headers adds to h one or more of NewHeaders that it does not carry yet,
// each with an even chance, and names them ("header X-Service-Region").
func Headers(h http.Header, o Options, rng *seed.RNG) []string {
	if !o.Headers {
		return nil
	}
	var added []string
	pick := rng.IntN(len(NewHeaders)) // at least this one
	for i, nh := range NewHeaders {
		if (i == pick || rng.IntN(2) == 0) && h.Get(nh.Name) == "" {
			h.Set(nh.Name, nh.Value)
			added = append(added, "header "+nh.Name)
		}
	}
	return added
}

type evolution struct {
	rng   *seed.RNG
	added []string
}

// occurrence is a string value an enum evolution may replace.
type occurrence struct {
	obj  *node
	i    int
	path string
}

// enums replaces one occurrence of each evolvable enum.
func (e *evolution) enums(root *node, status int) {
	groups := map[string][]occurrence{}
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		switch n.kind {
		case object:
			if path == "$.error.details" {
				return // free-form context, not the document's enums
			}
			for i, k := range n.keys {
				v := n.vals[i]
				p := member(path, k)
				if v.kind == str {
					var g string
					switch {
					case k == "status" && (slices.Contains(runningJob, v.s) || slices.Contains(runningPublication, v.s)):
						g = "status"
					case k == "kind" && slices.Contains(assetKinds, v.s):
						g = "kind"
					case k == "modality" && slices.Contains(modalities, v.s):
						g = "modality"
					case k == "code" && path == "$.error":
						g = "code"
					}
					if g != "" {
						groups[g] = append(groups[g], occurrence{n, i, p})
					}
				}
				walk(v, p)
			}
		case array:
			for i, v := range n.vals {
				walk(v, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(root, "$")
	for _, g := range []string{"status", "kind", "modality", "code"} {
		occ := groups[g]
		if len(occ) == 0 {
			continue
		}
		o := occ[e.rng.IntN(len(occ))]
		v := o.obj.vals[o.i]
		old := v.s
		switch g {
		case "status":
			v.s = NewJobStatus
			if slices.Contains(runningPublication, old) {
				v.s = NewPublicationStatus
			}
		case "kind":
			v.s = NewKind
		case "modality":
			v.s = NewModality
		case "code":
			v.s = DefaultErrorCode
			if c, ok := ErrorCodes[status]; ok {
				v.s = c
			}
		}
		e.added = append(e.added, o.path+": "+v.s+" (was "+old+")")
	}
}

// member is the path of key in the object at path: $.assets, or
// $.modalities['3d'] for a key that is not a name.
func member(path, key string) string {
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return path + "['" + strings.ReplaceAll(key, "'", `\'`) + "']"
		}
	}
	if key == "" {
		return path + "['']"
	}
	return path + "." + key
}

// fields adds one of NewFields to every object of the tree, and to none of
// the values it adds.
func (e *evolution) fields(n *node, path string) {
	switch n.kind {
	case object:
		if path == "$.error.details" {
			return
		}
		for i, k := range n.keys {
			e.fields(n.vals[i], member(path, k))
		}
		free := make([]int, 0, len(NewFields))
		for i, f := range NewFields {
			if !slices.Contains(n.keys, f.Name) {
				free = append(free, i)
			}
		}
		if len(free) == 0 {
			return
		}
		f := NewFields[free[e.rng.IntN(len(free))]]
		n.keys = append(n.keys, f.Name)
		n.vals = append(n.vals, &node{kind: raw, s: f.Value})
		e.added = append(e.added, member(path, f.Name))
	case array:
		for i, v := range n.vals {
			e.fields(v, path+"["+strconv.Itoa(i)+"]")
		}
	}
}

// reorder shuffles the keys of every object; it reports whether any
// order changed. An object whose shuffle drew its own order is rotated.
func (e *evolution) reorder(n *node) bool {
	changed := false
	for _, v := range n.vals {
		changed = e.reorder(v) || changed
	}
	if n.kind != object || len(n.keys) < 2 {
		return changed
	}
	perm := make([]int, len(n.keys))
	for i := range perm {
		perm[i] = i
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := e.rng.IntN(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	identity := true
	for i, p := range perm {
		identity = identity && i == p
	}
	if identity {
		perm = append(perm[1:], perm[0])
	}
	keys, vals := make([]string, len(perm)), make([]*node, len(perm))
	for i, p := range perm {
		keys[i], vals[i] = n.keys[p], n.vals[p]
	}
	n.keys, n.vals = keys, vals
	return true
}

// A node of a JSON document that keeps its objects' key order.
type node struct {
	kind byte
	keys []string // object
	vals []*node  // object values, array items
	s    string   // str: the string; raw: the encoded scalar
}

const (
	object byte = iota
	array
	str
	raw // a number, true, false, null, or JSON to write as it is
)

var errNotJSON = errors.New("evolve: not one JSON value")

func parse(body []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotJSON
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: array}
		if t == '{' {
			n.kind = object
		}
		for dec.More() {
			if n.kind == object {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: str, s: t}, nil
	case json.Number:
		return &node{kind: raw, s: t.String()}, nil
	case bool:
		return &node{kind: raw, s: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: raw, s: "null"}, nil
	}
	return nil, errNotJSON
}

func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case object:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case array:
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	case str:
		writeString(b, n.s)
	default:
		b.WriteString(n.s)
	}
}

// writeString writes s as a JSON string, without escaping HTML characters,
// as the server's own encoder does.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}
