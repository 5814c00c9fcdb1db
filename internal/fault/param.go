package fault

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// A Param is a parameter of fault kinds: a field of a kind's struct (or of
// a struct kinds embed), named by its JSON tag, with the facts control.json
// describes it with, the dashboard's form offers it with and the
// validation holds it to. A Params method declares each of its struct's
// fields by a pointer to it, so that its name is written once, in the tag:
//
//	func (k *garbage) Params() []*Param {
//		return []*Param{Field(&k.Bytes, "Garbage bytes", "how many bytes of garbage.").Min(1).Max(MaxGarbageBytes).Default(DefaultGarbage)}
//	}
type Param struct {
	// Name is the parameter's name: its field's JSON name.
	Name string

	ptr        any
	note       bool // a kind's own words on a parameter it shares (Note)
	title, doc string
	enum       []any
	def        any
	min, max   *float64
	below      bool // max is exclusive
	maxLen     int
	minLen     int
	pattern    *regexp.Regexp
	patternDoc string
	format     string
	required   bool

	goName     string
	goType     reflect.Type
	jsonTag    string
	owner      reflect.Type // the struct that declares it
	schemaType string
	specIndex  []int // the field of Spec
}

// Field declares the parameter a field is (field points to it), with its
// title (the form's label) and what it does (a sentence for control.json
// and the reference; the kinds that take it are named before it).
func Field(field any, title, doc string) *Param {
	return &Param{ptr: field, title: title, doc: doc}
}

// Note is what a kind says of a parameter it shares with other kinds (a
// field of a struct it embeds), instead of the parameter's own sentence;
// Required on it makes the parameter required for that kind alone.
func Note(field any, doc string) *Param { return &Param{ptr: field, note: true, doc: doc} }

// Min is the least value.
func (p *Param) Min(v float64) *Param { p.min = &v; return p }

// Max is the greatest value.
func (p *Param) Max(v float64) *Param { p.max = &v; return p }

// Below is the bound a value stays below (an exclusive maximum).
func (p *Param) Below(v float64) *Param { p.max, p.below = &v, true; return p }

// Enum lists the values it may take.
func (p *Param) Enum(values ...any) *Param { p.enum = values; return p }

// Default is its value when it is absent.
func (p *Param) Default(v any) *Param { p.def = v; return p }

// Length bounds the characters of a string.
func (p *Param) Length(min, max int) *Param { p.minLen, p.maxLen = min, max; return p }

// Pattern is the regular expression a string matches, and what a
// violation says of one that does not.
func (p *Param) Pattern(expr, reason string) *Param {
	p.pattern, p.patternDoc = regexp.MustCompile(expr), reason
	return p
}

// Format is the schema's format of a number (int64).
func (p *Param) Format(f string) *Param { p.format = f; return p }

// Required makes the parameter required.
func (p *Param) Required() *Param { p.required = true; return p }

// rawJSON is the type of a parameter that is a JSON value of its own (a
// body): an object, in the control API; it has no place in a header.
var rawJSON = reflect.TypeFor[json.RawMessage]()

// schemaType is the JSON schema type of a Go type.
func schemaType(t reflect.Type) string {
	if t == rawJSON {
		return "object"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	}
	return ""
}

// schema is the parameter's JSON schema in control.json: its title, its
// facts, and description, which names the kinds that take it.
func (p *Param) schema() *object {
	o := &object{}
	o.set("title", p.title)
	o.set("type", p.schemaType)
	if p.enum != nil {
		o.set("enum", p.enum)
	}
	if p.minLen > 0 {
		o.set("minLength", p.minLen)
	}
	if p.maxLen > 0 {
		o.set("maxLength", p.maxLen)
	}
	if p.pattern != nil {
		o.set("pattern", p.pattern.String())
	}
	if p.min != nil {
		o.set("minimum", *p.min)
	}
	if p.below {
		o.set("exclusiveMaximum", true)
	}
	if p.max != nil {
		o.set("maximum", *p.max)
	}
	if p.format != "" {
		o.set("format", p.format)
	}
	if p.def != nil {
		o.set("default", p.def)
	}
	o.set("description", p.description())
	return o
}

// facts is the parameter's schema without its title and description, as
// the reference shows it.
func (p *Param) facts() string {
	s := p.schema()
	s.fields = s.fields[1 : len(s.fields)-1]
	return s.inline()
}

// takers are the kinds that take the parameter, each with what it says of
// it (its note, or the parameter's sentence).
func (p *Param) takers() (names, docs []string) {
	for _, k := range kinds {
		for _, kp := range k.params {
			if kp.Param == p {
				names = append(names, k.name)
				docs = append(docs, kp.doc())
			}
		}
	}
	return names, docs
}

// doc is what the kind says of the parameter.
func (kp *kindParam) doc() string {
	if kp.note != "" {
		return kp.note
	}
	return kp.Param.doc
}

// description is the parameter's description: the kinds that take it,
// then what it does; kinds that say something else of it, each with its
// own sentence.
func (p *Param) description() string {
	names, docs := p.takers()
	var parts []string
	for i := 0; i < len(names); {
		j := i + 1
		for j < len(names) && docs[j] == docs[i] {
			j++
		}
		parts = append(parts, "`"+strings.Join(names[i:j], "`, `")+"`: "+docs[i])
		i = j
	}
	return strings.Join(parts, " ")
}

// set reports whether a spec gives the parameter: a pointer that is not
// nil, or a value that is not its zero.
func (p *Param) set(s *Spec) bool {
	if p.specIndex == nil {
		return false
	}
	return !reflect.ValueOf(s).Elem().FieldByIndex(p.specIndex).IsZero()
}

// check reports what the parameter's facts refuse of the value a spec
// gives it (a parameter it sets).
func (p *Param) check(s *Spec, bad func(reason string, allowed ...any)) {
	v := reflect.ValueOf(s).Elem().FieldByIndex(p.specIndex)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		str := v.String()
		switch {
		case p.enum != nil && !containsValue(p.enum, str):
			bad("must be "+orList(p.enum), p.enum...)
		case p.maxLen > 0 && len(str) > p.maxLen:
			bad(fmt.Sprintf("must be at most %d characters", p.maxLen))
		case p.minLen > 0 && len(str) < p.minLen:
			bad(fmt.Sprintf("must be at least %d characters", p.minLen))
		case p.pattern != nil && !p.pattern.MatchString(str):
			bad(p.patternDoc)
		}
	case reflect.Bool, reflect.Slice: // a JSON value: its kind checks it
	default:
		var n float64
		switch {
		case v.CanInt():
			n = float64(v.Int())
		case v.CanUint():
			n = float64(v.Uint())
		default:
			n = v.Float()
		}
		switch {
		case p.enum != nil:
			if !containsValue(p.enum, n) {
				bad("must be "+orList(p.enum), p.enum...)
			}
		case math.IsNaN(n), p.min != nil && n < *p.min, p.max != nil && (n > *p.max || p.below && n >= *p.max):
			bad(p.bounds())
		}
	}
}

// bounds says what a number must be.
func (p *Param) bounds() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case p.min != nil && p.below:
		return "must be at least " + f(*p.min) + " and below " + f(*p.max)
	case p.min != nil && p.max != nil:
		return "must be between " + f(*p.min) + " and " + f(*p.max)
	case p.max != nil:
		return "must be at most " + f(*p.max)
	case p.min != nil && *p.min == 0:
		return "must not be negative"
	case p.min != nil:
		return "must be at least " + f(*p.min)
	}
	return "must be a number"
}

// containsValue reports whether enum holds v (a number compared as one).
func containsValue(enum []any, v any) bool {
	for _, e := range enum {
		if e == v {
			return true
		}
		if n, ok := v.(float64); ok {
			switch e := e.(type) {
			case int:
				if float64(e) == n {
					return true
				}
			case float64:
				if e == n {
					return true
				}
			}
		}
	}
	return false
}

// orList is "a, b or c".
func orList(values []any) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// parse sets the parameter of a spec from a header's value.
func (p *Param) parse(s *Spec, value string) error {
	if p.goType == rawJSON {
		return fmt.Errorf("is a JSON value: give it in a rule of the control API (POST /_mock/faults/rules), not in a header")
	}
	v := reflect.ValueOf(s).Elem().FieldByIndex(p.specIndex)
	t := p.goType
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	x := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		x.SetString(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%q is not true or false", value)
		}
		x.SetBool(b)
	case reflect.Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", value)
		}
		x.SetFloat(f)
	default:
		if x.CanUint() {
			n, err := strconv.ParseUint(value, 10, t.Bits())
			if err != nil {
				return fmt.Errorf("%q is not an integer", value)
			}
			x.SetUint(n)
		} else {
			n, err := strconv.ParseInt(value, 10, t.Bits())
			if err != nil {
				return fmt.Errorf("%q is not an integer", value)
			}
			x.SetInt(n)
		}
		// A value of a field without a pointer that is its zero would be
		// taken for none.
		if p.goType.Kind() != reflect.Pointer && x.IsZero() && p.min != nil && *p.min >= 1 {
			return fmt.Errorf("must be positive")
		}
	}
	if p.goType.Kind() == reflect.Pointer {
		v.Set(x.Addr())
	} else {
		v.Set(x)
	}
	return nil
}
