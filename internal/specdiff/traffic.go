package specdiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/journal"
)

// Traffic is what a client did, from a saved coverage report (which
// operations it called and which statuses they answered) or a saved
// journal (each request: its query, and its bodies when the journal kept
// them), or both: the coverage then counts the calls and statuses, the
// journal tells the parameters and fields.
type Traffic struct {
	coverage *journal.Coverage
	entries  []journal.Entry
	// resolved: per operation id (or "METHOD /path" when the base has no
	// id for it).
	ops        map[string]*opUse
	unresolved int
}

// TrafficSummary says what a report's traffic held.
type TrafficSummary struct {
	Sources []string `json:"sources"` // coverage, journal
	Calls   int      `json:"calls"`
	// Operations are the operations called.
	Operations int `json:"operations"`
	// JournalEntries are the journal's entries, Unmatched those of
	// them that name no operation of the base document (a file download).
	JournalEntries int `json:"journal_entries,omitempty"`
	Unmatched      int `json:"unmatched,omitempty"`
}

// ReadCoverage reads a saved coverage report: the JSON of GET
// /_mock/coverage. Several reports add up.
func (t *Traffic) ReadCoverage(data []byte) error {
	var c journal.Coverage
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("not a coverage report (the JSON of GET /_mock/coverage): %w", err)
	}
	if c.Operations == nil {
		return fmt.Errorf(`not a coverage report (the JSON of GET /_mock/coverage): no "operations"`)
	}
	if t.coverage == nil {
		t.coverage = &c
	} else {
		t.coverage.Operations = append(t.coverage.Operations, c.Operations...)
	}
	return nil
}

// ReadJournal reads a saved journal: the JSON of GET /_mock/journal (an
// object with "entries"), a JSON array of entries, or JSON lines of
// entries or of journal events (the event stream's data, with or without
// its "data: " prefix; other events are skipped).
func (t *Traffic) ReadJournal(data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return fmt.Errorf("the journal is empty")
	}
	switch trimmed[0] {
	case '[':
		var es []journal.Entry
		if err := json.Unmarshal(trimmed, &es); err == nil {
			t.entries = append(t.entries, es...)
			return nil
		} else if !bytes.Contains(trimmed, []byte("\n")) {
			return fmt.Errorf("not a journal: %w", err)
		}
	case '{':
		var page struct {
			Entries *[]journal.Entry `json:"entries"`
			Error   *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(trimmed, &page); err == nil && page.Entries != nil {
			t.entries = append(t.entries, *page.Entries...)
			return nil
		} else if err == nil && page.Error != nil {
			return fmt.Errorf("not a journal but an error answer: %s", page.Error.Message)
		}
	}
	// JSON lines.
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == ':' || bytes.HasPrefix(line, []byte("id:")) || bytes.HasPrefix(line, []byte("event:")) {
			continue // blank, an SSE comment or field
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data:")))
		var l struct {
			Type   string         `json:"type"`
			Entry  *journal.Entry `json:"entry"`
			Method *string        `json:"method"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("not a journal: line %d: %w", n, err)
		}
		switch {
		case l.Type == "journal" && l.Entry != nil:
			t.entries = append(t.entries, *l.Entry)
		case l.Type != "":
			// another event
		case l.Method != nil:
			var e journal.Entry
			if err := json.Unmarshal(line, &e); err != nil {
				return fmt.Errorf("not a journal: line %d: %w", n, err)
			}
			t.entries = append(t.entries, e)
		default:
			return fmt.Errorf(`not a journal: line %d is neither an entry nor a journal event`, n)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the journal: %w", err)
	}
	return nil
}

// opUse is one operation's traffic.
type opUse struct {
	calls    int
	statuses map[int]int
	// From the journal: its entries, the parameters they sent (by "in
	// name") and their values, the requests whose body is known and the
	// fields they held (by oasdiff's property path: a/b, a/items/b) with
	// their values; the same for responses, by status.
	entries     int
	params      map[string]int
	paramValues map[string]map[string]int
	reqKnown    int
	reqBodies   int
	reqFields   map[string]int
	reqValues   map[string]map[string]int
	resKnown    map[int]int
	resFields   map[int]map[string]int
	resValues   map[int]map[string]map[string]int
}

func newOpUse() *opUse {
	return &opUse{statuses: map[int]int{}, params: map[string]int{}, paramValues: map[string]map[string]int{},
		reqFields: map[string]int{}, reqValues: map[string]map[string]int{},
		resKnown: map[int]int{}, resFields: map[int]map[string]int{}, resValues: map[int]map[string]map[string]int{}}
}

// resolve attributes the traffic to the base document's operations.
func (t *Traffic) resolve(ops *operations) {
	t.ops, t.unresolved = map[string]*opUse{}, 0
	get := func(key string) *opUse {
		u := t.ops[key]
		if u == nil {
			u = newOpUse()
			t.ops[key] = u
		}
		return u
	}
	keyOf := func(id, method, path string) (string, *operation) {
		if o := ops.byID[id]; o != nil {
			return id, o
		}
		if method != "" && path != "" {
			if o := ops.match(method, path); o != nil {
				return cmpOr(o.id, o.method+" "+o.path), o
			}
		}
		return "", nil
	}
	if t.coverage != nil {
		for _, oc := range t.coverage.Operations {
			key, _ := keyOf(oc.Operation, oc.Method, oc.Path)
			if key == "" {
				continue
			}
			u := get(key)
			for _, s := range oc.Statuses {
				u.calls += s.Count
				u.statuses[s.Status] += s.Count
			}
		}
	}
	for i := range t.entries {
		e := &t.entries[i]
		key, o := keyOf(e.Operation, e.Method, e.Path)
		if key == "" {
			t.unresolved++
			continue
		}
		u := get(key)
		if t.coverage == nil {
			u.calls++
			u.statuses[e.Status]++
		}
		u.record(e, o)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// record adds a journal entry's parameters and fields.
func (u *opUse) record(e *journal.Entry, o *operation) {
	u.entries++
	sent := map[string][]string{}
	for name, in := range o.params {
		if in == "path" {
			sent["path "+name] = nil
		}
	}
	if q, err := url.ParseQuery(e.Query); err == nil {
		for name, vs := range q {
			sent["query "+name] = vs
		}
	}
	req, reqOK := body(e.RequestBody, e.RequestBodyTruncated, e.RequestBytes)
	if e.Front == "mcp" {
		// A tool's arguments hold the parameters and the body's fields.
		if m, ok := req.(map[string]any); ok {
			rest := map[string]any{}
			for k, v := range m {
				if in, ok := o.params[k]; ok {
					sent[in+" "+k] = scalars(v)
				} else {
					rest[k] = v
				}
			}
			req = rest
			if len(rest) == 0 {
				req = nil
			}
		}
	}
	for k, vs := range sent {
		u.params[k]++
		for _, v := range uniq(vs) {
			inc(u.paramValues, k, v)
		}
	}
	if reqOK {
		u.reqKnown++
		if req != nil {
			u.reqBodies++
		}
		fields, values := flatten(req)
		for f := range fields {
			u.reqFields[f]++
		}
		for f, vs := range values {
			for v := range vs {
				inc(u.reqValues, f, v)
			}
		}
	}
	if res, ok := body(e.ResponseBody, e.ResponseBodyTruncated, e.ResponseBytes); ok {
		u.resKnown[e.Status]++
		fields, values := flatten(res)
		if u.resFields[e.Status] == nil {
			u.resFields[e.Status], u.resValues[e.Status] = map[string]int{}, map[string]map[string]int{}
		}
		for f := range fields {
			u.resFields[e.Status][f]++
		}
		for f, vs := range values {
			for v := range vs {
				inc(u.resValues[e.Status], f, v)
			}
		}
	}
}

func inc(m map[string]map[string]int, k, v string) {
	if m[k] == nil {
		m[k] = map[string]int{}
	}
	m[k][v]++
}

func uniq(vs []string) []string {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return slices.Compact(vs)
}

// body parses a journal body: known when it is JSON, or when there was
// none; unknown when the journal cut it or kept none of it.
func body(s string, truncated bool, n int64) (any, bool) {
	if truncated {
		return nil, false
	}
	if s == "" {
		return nil, n == 0
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// scalars are the values of a parameter given as a tool argument.
func scalars(v any) []string {
	if a, ok := v.([]any); ok {
		var out []string
		for _, x := range a {
			out = append(out, scalar(x))
		}
		return out
	}
	return []string{scalar(v)}
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "null"
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

// flatten lists the property paths of a JSON value in oasdiff's spelling
// (a/b, and a/items/b inside arrays) and the scalar values at each.
func flatten(v any) (map[string]bool, map[string]map[string]bool) {
	fields, values := map[string]bool{}, map[string]map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := k
				if prefix != "" {
					p = prefix + "/" + k
				}
				fields[p] = true
				walk(p, x)
			}
		case []any:
			p := "items"
			if prefix != "" {
				p = prefix + "/items"
			}
			for _, x := range v {
				walk(p, x)
			}
		default:
			if prefix == "" {
				return
			}
			if values[prefix] == nil {
				values[prefix] = map[string]bool{}
			}
			values[prefix][scalar(v)] = true
		}
	}
	walk("", v)
	return fields, values
}

func (t *Traffic) summary() TrafficSummary {
	s := TrafficSummary{Sources: []string{}, JournalEntries: len(t.entries), Unmatched: t.unresolved}
	if t.coverage != nil {
		s.Sources = append(s.Sources, "coverage")
	}
	if t.entries != nil {
		s.Sources = append(s.Sources, "journal")
	}
	for _, u := range t.ops {
		s.Calls += u.calls
		if u.calls > 0 {
			s.Operations++
		}
	}
	return s
}

var (
	statusArg   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`) })
	locationArg = map[string]bool{"query": true, "path": true, "header": true, "cookie": true}
)

// use is how much of the traffic touches a change. oasdiff's arguments
// are in no fixed place across rules, so the changed element is found
// among them: the (location, name) pair of a parameter, the property path
// the traffic knows (or one of the shared properties, where a shared
// schema changed), the status.
func (t *Traffic) use(c Change, args, shared []string) Use {
	key := c.OperationID
	if key == "" {
		key = c.Method + " " + c.Path
	}
	u := t.ops[key]
	if u == nil || c.Method == "" {
		return Use{}
	}
	use := Use{Calls: u.calls, Used: u.calls > 0}
	id := c.ID
	enum := strings.Contains(id, "enum-value")
	// absent: the change hurts the calls that do not send the element (a
	// new required parameter), not those that do.
	absent := strings.HasPrefix(id, "new-required-") || strings.Contains(id, "became-required")
	var status []int
	for _, a := range args {
		if statusArg().MatchString(a) {
			if n, err := strconv.Atoi(a); err == nil {
				status = append(status, n)
			}
		}
	}
	known := func(hits, sample int, element string) Use {
		use.Known, use.Sample = true, sample
		use.Hits = hits
		if absent {
			use.Hits, element = sample-hits, "without "+element
		}
		if use.Hits > 0 {
			use.Element = element
		}
		use.Used = use.Hits > 0
		return use
	}
	switch {
	case strings.Contains(id, "request-parameter") || strings.Contains(id, "request-path-parameter") || strings.Contains(id, "request-default-parameter"):
		for i := 0; i+1 < len(args); i++ {
			in, name := args[i], args[i+1]
			if !locationArg[in] || (in != "query" && in != "path") || u.entries == 0 {
				continue
			}
			k := in + " " + name
			what := in + " parameter " + name
			if enum {
				best, value := 0, ""
				for _, v := range args {
					if n := u.paramValues[k][v]; n > best {
						best, value = n, v
					}
				}
				return known(best, u.entries, what+"="+value)
			}
			return known(u.params[k], u.entries, what)
		}
	case strings.Contains(id, "request-body"):
		if u.reqKnown > 0 {
			return known(u.reqBodies, u.reqKnown, "request body")
		}
	case strings.Contains(id, "request-") && strings.Contains(id, "property") && !strings.Contains(id, "header"):
		if u.reqKnown > 0 {
			hits, element := match(args, shared, u.reqFields, u.reqValues, enum)
			if element == "" && len(args) > 0 {
				element = args[0]
			}
			return known(hits, u.reqKnown, "request field "+element)
		}
	case strings.Contains(id, "response-") && strings.Contains(id, "property") && !strings.Contains(id, "header"):
		sample, hits, element := 0, 0, ""
		for st, n := range u.resKnown {
			if len(status) > 0 && !slices.Contains(status, st) {
				continue
			}
			sample += n
			h, e := match(args, shared, u.resFields[st], u.resValues[st], enum)
			if h > 0 {
				hits += h
				element = fmt.Sprintf("response field %s (%d)", e, st)
			}
		}
		if sample > 0 {
			return known(hits, sample, element)
		}
	case strings.HasPrefix(id, "response-") && strings.Contains(id, "status") && len(status) > 0:
		return known(u.statuses[status[0]], u.calls, "status "+strconv.Itoa(status[0]))
	case (strings.HasPrefix(id, "response-body") || strings.HasPrefix(id, "response-media")) && len(status) > 0:
		return known(u.statuses[status[0]], u.calls, "status "+strconv.Itoa(status[0]))
	}
	return use
}

// match finds the changed property among a change's arguments and the
// other properties of a shared schema: the path (and, for an enum change,
// the value at it, one of the arguments) the traffic used most.
func match(args, shared []string, fields map[string]int, values map[string]map[string]int, enum bool) (int, string) {
	best, element := 0, ""
	for i, p := range slices.Concat(args, shared) {
		if !enum {
			if n := fields[p]; n > best {
				best, element = n, p
			}
			continue
		}
		for j, v := range args {
			if i != j {
				if n := values[p][v]; n > best {
					best, element = n, p+"="+v
				}
			}
		}
	}
	return best, element
}
