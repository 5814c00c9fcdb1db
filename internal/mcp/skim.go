package mcp

import (
	"encoding/binary"
	"encoding/json"
	"strings"
)

// skim reads a digest from an operation's JSON in one pass over its bytes,
// validating as it goes, for the bodies the server writes itself: valid
// JSON, lower-case keys without escapes, each once, each of the type the
// digest expects. It gives up (ok false) on anything else, for
// encoding/json to read (digestOf): an invalid document, a key that
// matches a digest field only in another case or through an escape, a
// field twice, a value of another type. What it reads is what
// encoding/json would have read (FuzzSkimDigest holds the two equal),
// without checking the document twice and decoding it through reflection.
func skim(data []byte) (d *digest, ok bool) {
	s := skimmer{b: data}
	d = &digest{}
	s.ws()
	if !s.object(func(key []byte) bool { return s.top(d, key) }) {
		return nil, false
	}
	s.ws()
	if s.failed || s.i != len(s.b) {
		return nil, false
	}
	return d, true
}

// skimmer walks a JSON document; failed says it gave up.
type skimmer struct {
	b      []byte
	i      int
	depth  int
	failed bool
	seen   uint32 // the top-level digest fields read already
}

// maxSkimDepth is how deep the skimmer nests before it gives up (the
// encoding/json limit is deeper: it reads such a document instead).
const maxSkimDepth = 1000

func (s *skimmer) fail() bool {
	s.failed = true
	return false
}

func (s *skimmer) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (s *skimmer) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object reads an object, handing each member's key (its plain bytes) to
// member, which reads the value; it returns false once the skimmer gave
// up, or when the next value is not an object.
func (s *skimmer) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return s.fail()
	}
	if s.depth++; s.depth > maxSkimDepth {
		return s.fail()
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.peek() != '"' {
			return s.fail()
		}
		key, plain := s.str()
		if s.failed {
			return false
		}
		if !plain {
			return s.fail() // an escaped or non-ASCII key: encoding/json folds it
		}
		if s.peek() != ':' {
			return s.fail()
		}
		s.i++
		if !member(key) || s.failed {
			return s.fail()
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return s.fail()
		}
	}
}

// array reads an array, element reading each element.
func (s *skimmer) array(element func() bool) bool {
	if s.peek() != '[' {
		return s.fail()
	}
	if s.depth++; s.depth > maxSkimDepth {
		return s.fail()
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !element() || s.failed {
			return s.fail()
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return s.fail()
		}
	}
}

// str reads a string at s.i (its opening quote), returning its contents
// as they are; plain says they hold neither an escape nor a byte outside
// ASCII.
func (s *skimmer) str() (raw []byte, plain bool) {
	start := s.i + 1
	i := start
	for i < len(s.b) && plainByte[s.b[i]] {
		i++
	}
	if i < len(s.b) && s.b[i] == '"' {
		s.i = i + 1
		return s.b[start:i], true
	}
	plain = true
	for ; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], plain
		case c < 0x20:
			s.fail()
			return nil, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			i++
			if i >= len(s.b) {
				s.fail()
				return nil, false
			}
			switch s.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s.b) {
					s.fail()
					return nil, false
				}
				for _, h := range s.b[i+1 : i+5] {
					if !isHex(h) {
						s.fail()
						return nil, false
					}
				}
				i += 4
			default:
				s.fail()
				return nil, false
			}
		}
	}
	s.fail()
	return nil, false
}

// skipStr reads a string at s.i (its opening quote), as str does, without
// telling whether it is plain: the bytes that need no look are passed over
// in a tight loop.
func (s *skimmer) skipStr() {
	b, i := s.b, s.i+1
	for {
		i = plainRun(b, i)
		for i < len(b) && strByte[b[i]] {
			i++
		}
		switch {
		case i >= len(b) || b[i] < 0x20:
			s.fail()
			return
		case b[i] == '"':
			s.i = i + 1
			return
		}
		// An escape.
		if i++; i >= len(b) {
			s.fail()
			return
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
				s.fail()
				return
			}
			i += 5
		default:
			s.fail()
			return
		}
	}
}

// plainRun passes over the 8-byte words of b from i that hold neither a
// quote, nor a backslash, nor a control character, returning the index of
// the first word that may (the bytes are then looked at one by one).
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		// A byte of zero in quote or backslash, or one under 0x20 in x,
		// sets its high bit here (and maybe a later byte's: the word is
		// then looked at byte by byte, which is only slower).
		if ((quote-ones)&^quote|(backslash-ones)&^backslash|(x-ones*0x20)&^x)&highs != 0 {
			break
		}
	}
	return i
}

// strByte tells the bytes of a string that are neither its end, nor an
// escape, nor a control character.
var strByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainByte tells the bytes of a plain string (str): ASCII, neither its
// end, nor an escape, nor a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// value reads any value, returning its bytes. Objects and arrays are
// passed over in one loop, without a call per member: the digest reads
// none of what is inside them.
func (s *skimmer) value() []byte {
	s.ws()
	start := s.i
	if !s.skip() {
		s.fail()
		return nil
	}
	return s.b[start:s.i]
}

// skip passes over the value at s.i (no white space before it),
// validating it: false if it is not one.
func (s *skimmer) skip() bool {
	b := s.b
	var objects uint64 // bit d: the container at depth d+1 is an object
	depth := 0
	for {
		// A value.
		if s.i >= len(b) {
			return false
		}
		switch c := b[s.i]; {
		case c == '{' || c == '[':
			if depth == 64 || s.depth+depth >= maxSkimDepth {
				return false
			}
			s.i++
			s.ws()
			if s.i < len(b) && (c == '{' && b[s.i] == '}' || c == '[' && b[s.i] == ']') {
				s.i++
				break // an empty container: a whole value
			}
			objects &^= 1 << depth
			if c == '{' {
				objects |= 1 << depth
			}
			depth++
			if c == '{' && !s.key() {
				return false
			}
			s.ws()
			continue
		case c == '"':
			s.skipStr()
		case c == '-' || '0' <= c && c <= '9':
			s.number()
		case c == 't':
			s.literal("true")
		case c == 'f':
			s.literal("false")
		case c == 'n':
			s.literal("null")
		default:
			return false
		}
		// After a value: the next member or element, or the ends of the
		// containers it closes.
		for {
			if s.failed {
				return false
			}
			if depth == 0 {
				return true
			}
			s.ws()
			if s.i >= len(b) {
				return false
			}
			object := objects&(1<<(depth-1)) != 0
			if b[s.i] == ',' {
				s.i++
				if object && !s.key() {
					return false
				}
				s.ws()
				break
			}
			if object && b[s.i] == '}' || !object && b[s.i] == ']' {
				s.i++
				depth--
				continue
			}
			return false
		}
	}
}

// key reads an object's key and its colon, white space around them.
func (s *skimmer) key() bool {
	if s.peek() != '"' {
		return false
	}
	s.skipStr()
	if s.failed || s.peek() != ':' {
		return false
	}
	s.i++
	return true
}

func (s *skimmer) literal(word string) {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		s.fail()
		return
	}
	s.i += len(word)
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *skimmer) number() {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.fail()
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.fail()
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.fail()
			return
		}
	}
	s.i = i
}

// raw reads a value into a digest field, as a json.RawMessage.
func (s *skimmer) raw(into *[]byte) bool {
	*into = s.value()
	return !s.failed
}

// top reads one member of the document's object into the digest.
func (s *skimmer) top(d *digest, key []byte) bool {
	field := -1
	for i, name := range topFields {
		if string(key) == name {
			field = i
			break
		}
	}
	if field < 0 {
		if foldsToAny(key, topFields) {
			return false
		}
		s.value()
		return !s.failed
	}
	if s.seen&(1<<field) != 0 {
		return false // a field twice: encoding/json merges or replaces
	}
	s.seen |= 1 << field
	switch topFields[field] {
	case "error":
		if s.null() {
			return true
		}
		d.Error = &struct {
			Code    json.RawMessage `json:"code"`
			Message json.RawMessage `json:"message"`
		}{}
		e, seen := d.Error, 0
		return s.object(func(k []byte) bool {
			return s.member(k, &seen, []string{"code", "message"}, []*json.RawMessage{&e.Code, &e.Message})
		})
	case "data":
		if s.null() {
			return true
		}
		if s.peek() != '[' {
			return false
		}
		d.Data = make([]struct {
			ID   json.RawMessage `json:"id"`
			Slug json.RawMessage `json:"slug"`
		}, 0, 20)
		return s.array(func() bool {
			d.Data = append(d.Data, struct {
				ID   json.RawMessage `json:"id"`
				Slug json.RawMessage `json:"slug"`
			}{})
			item, seen := &d.Data[len(d.Data)-1], 0
			return s.object(func(k []byte) bool {
				return s.member(k, &seen, []string{"id", "slug"}, []*json.RawMessage{&item.ID, &item.Slug})
			})
		})
	case "assets":
		if s.null() {
			return true
		}
		if s.peek() != '[' {
			return false
		}
		d.Assets = make([]struct {
			ID       json.RawMessage `json:"id"`
			Kind     json.RawMessage `json:"kind"`
			Status   json.RawMessage `json:"status"`
			URL      json.RawMessage `json:"url"`
			MimeType json.RawMessage `json:"mime_type"`
		}, 0, 4)
		return s.array(func() bool {
			d.Assets = append(d.Assets, struct {
				ID       json.RawMessage `json:"id"`
				Kind     json.RawMessage `json:"kind"`
				Status   json.RawMessage `json:"status"`
				URL      json.RawMessage `json:"url"`
				MimeType json.RawMessage `json:"mime_type"`
			}{})
			a, seen := &d.Assets[len(d.Assets)-1], 0
			return s.object(func(k []byte) bool {
				return s.member(k, &seen, []string{"id", "kind", "status", "url", "mime_type"},
					[]*json.RawMessage{&a.ID, &a.Kind, &a.Status, &a.URL, &a.MimeType})
			})
		})
	case "video":
		if s.null() {
			return true
		}
		d.Video = &struct {
			URL json.RawMessage `json:"url"`
		}{}
		v, seen := d.Video, 0
		return s.object(func(k []byte) bool {
			return s.member(k, &seen, []string{"url"}, []*json.RawMessage{&v.URL})
		})
	}
	return s.raw(d.rawField(field))
}

// member reads one member of a nested object into the field of its name,
// or skips it; seen marks the fields read already.
func (s *skimmer) member(key []byte, seen *int, names []string, fields []*json.RawMessage) bool {
	for i, name := range names {
		if string(key) == name {
			if *seen&(1<<i) != 0 {
				return false
			}
			*seen |= 1 << i
			return s.raw((*[]byte)(fields[i]))
		}
	}
	if foldsToAny(key, names) {
		return false
	}
	s.value()
	return !s.failed
}

// null reads a null, if the next value is one.
func (s *skimmer) null() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

// foldsToAny reports whether an ASCII key matches one of names but in
// another case: encoding/json would read it into that field.
func foldsToAny(key []byte, names []string) bool {
	for _, name := range names {
		if len(name) == len(key) && strings.EqualFold(name, string(key)) {
			return true
		}
	}
	return false
}

// topFields are the digest's top-level fields, by their JSON names.
var topFields = []string{"error", "object", "id", "workspace_name", "plan", "status", "effect", "kind", "data",
	"has_more", "next_cursor", "assets", "video", "url", "share_url", "credits_charged", "credits_balance",
	"covered_by_monthly_gift"}

// rawField is the digest's raw field of a top-level field's index.
func (d *digest) rawField(i int) *[]byte {
	var f *json.RawMessage
	switch topFields[i] {
	case "object":
		f = &d.Object
	case "id":
		f = &d.ID
	case "workspace_name":
		f = &d.WorkspaceName
	case "plan":
		f = &d.Plan
	case "status":
		f = &d.Status
	case "effect":
		f = &d.Effect
	case "kind":
		f = &d.Kind
	case "has_more":
		f = &d.HasMore
	case "next_cursor":
		f = &d.NextCursor
	case "url":
		f = &d.URL
	case "share_url":
		f = &d.ShareURL
	case "credits_charged":
		f = &d.CreditsCharged
	case "credits_balance":
		f = &d.CreditsBalance
	case "covered_by_monthly_gift":
		f = &d.CoveredByMonthlyGift
	}
	return (*[]byte)(f)
}

// skimMessage reads a POST's body when it is one message of the plain
// shape every client sends (a request, a notification or a response, its
// strings without escapes, each field once and of its type), as
// decodeBody reads it through encoding/json; ok is false for anything
// else, which encoding/json reads (FuzzSkimMessage holds the two equal).
func skimMessage(data []byte) (b body, ok bool) {
	s := skimmer{b: data}
	b.msgs = make([]message, 1)
	m := &b.msgs[0]
	s.ws()
	var seen int
	if !s.object(func(key []byte) bool {
		switch {
		case s.once(key, "jsonrpc", 0, &seen):
			return s.plainString(&m.JSONRPC)
		case s.once(key, "id", 1, &seen):
			return s.raw((*[]byte)(&m.ID))
		case s.once(key, "method", 2, &seen):
			return s.plainString(&m.Method)
		case s.once(key, "params", 3, &seen):
			return s.params(m)
		case s.once(key, "result", 4, &seen):
			return s.raw((*[]byte)(&m.Result))
		case s.once(key, "error", 5, &seen):
			return s.raw((*[]byte)(&m.Error))
		}
		return s.other(key, "jsonrpc", "id", "method", "params", "result", "error")
	}) {
		return body{}, false
	}
	s.ws()
	if s.failed || s.i != len(s.b) || m.Method == "" && m.Result == nil && m.Error == nil {
		return body{}, false
	}
	return b, true
}

// once reports whether key is name, the field of bit i of seen; a field
// read twice fails the skimmer.
func (s *skimmer) once(key []byte, name string, i int, seen *int) bool {
	if string(key) != name {
		return false
	}
	if *seen&(1<<i) != 0 {
		s.failed = true // the value is then not read: the caller fails
		return false
	}
	*seen |= 1 << i
	return true
}

// other skips the value of a key that names none of a struct's fields,
// and fails on one that matches a field only in another case (or that
// once refused as read twice).
func (s *skimmer) other(key []byte, names ...string) bool {
	if s.failed || foldsToAny(key, names) {
		return false
	}
	s.value()
	return !s.failed
}

// plainString reads a string without escapes or bytes outside ASCII,
// which decodes to its own bytes.
func (s *skimmer) plainString(into *string) bool {
	if s.peek() != '"' {
		return false
	}
	raw, plain := s.str()
	if s.failed || !plain {
		return false
	}
	*into = string(raw)
	return true
}

// params reads a message's params.
func (s *skimmer) params(m *message) bool {
	if s.peek() != '{' {
		return false
	}
	p := &m.Params
	var seen int
	return s.object(func(key []byte) bool {
		switch {
		case s.once(key, "name", 0, &seen):
			return s.plainString(&p.Name)
		case s.once(key, "arguments", 1, &seen):
			return s.arguments(&p.Arguments)
		case s.once(key, "uri", 2, &seen):
			return s.plainString(&p.URI)
		case s.once(key, "_meta", 3, &seen):
			return s.meta(m)
		}
		return s.other(key, "name", "arguments", "uri", "_meta")
	})
}

// arguments reads a call's arguments object: each value shares the
// body's bytes, as arguments.UnmarshalJSON keeps them.
func (s *skimmer) arguments(a *arguments) bool {
	if s.peek() != '{' {
		return false
	}
	m := map[string]json.RawMessage{}
	if !s.object(func(key []byte) bool {
		v := s.value()
		m[string(key)] = v
		return !s.failed
	}) {
		return false
	}
	a.m = m
	return true
}

// meta reads a message's _meta.
func (s *skimmer) meta(m *message) bool {
	if s.peek() != '{' {
		return false
	}
	meta := &m.Params.Meta
	var seen int
	return s.object(func(key []byte) bool {
		switch {
		case s.once(key, "progressToken", 0, &seen):
			return s.raw((*[]byte)(&meta.ProgressToken))
		case s.once(key, "io.modelcontextprotocol/protocolVersion", 1, &seen):
			return s.plainString(&meta.ProtocolVersion)
		case s.once(key, "io.modelcontextprotocol/clientCapabilities", 2, &seen):
			return s.raw((*[]byte)(&meta.ClientCapabilities))
		case s.once(key, "io.modelcontextprotocol/clientInfo", 3, &seen):
			if s.peek() != '{' {
				return false
			}
			meta.ClientInfo = &struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			}{}
			info, seenInfo := meta.ClientInfo, 0
			return s.object(func(key []byte) bool {
				switch {
				case s.once(key, "name", 0, &seenInfo):
					return s.plainString(&info.Name)
				case s.once(key, "version", 1, &seenInfo):
					return s.plainString(&info.Version)
				}
				return s.other(key, "name", "version")
			})
		}
		return s.other(key, "progressToken", "io.modelcontextprotocol/protocolVersion",
			"io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo")
	})
}
