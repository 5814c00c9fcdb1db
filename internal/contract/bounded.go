package contract

import (
	"encoding/json"
	"hash/maphash"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediamock/mediamock/internal/contract/jsonvalue"
	"github.com/mediamock/mediamock/internal/problem"
)

// A JSON body is decoded bounded: the decode follows the body's schema and
// keeps no more of a body that breaks it than its error lists
// (problem.MaxViolations), so that refusing a body of a million unknown
// fields or of a hundred thousand bad items costs about its own bytes,
// not a violation (and a kin-openapi error) for each. kin-openapi's
// validator then judges the value kept, as it judges any, and the
// violations the decode left out are counted: the error lists the same
// first violations, in the same order, and the same count of the others,
// as the validator would over the whole value (TestBoundedDecodeIsExact
// and the oracle hold it to that). What the decode leaves out:
//
//   - an unknown member of an object whose schema allows no other
//     (additionalProperties: false) is read past: the validator does not
//     look at its value, which is kept only when it is neither an object
//     nor an array, and of its names only the first MaxViolations in sorted
//     order (the order the validator visits them) are kept, the others
//     counted, one violation each;
//   - a value of a kind its schema's type does not allow (an object where
//     a string goes) is read past and kept empty ({} or []): the validator
//     gives it the same one violation;
//   - an object whose schema says nothing of its members (no properties,
//     none required, any others: a forced answer's body, judged later
//     against another document) is read past and kept empty: the
//     validator judges no more of it than that it is an object;
//   - the items of an array past those whose violations fill the list
//     (more than MaxViolations) are judged one by one as they are read, and
//     counted, not kept; past its minItems and maxItems+1 first items, so
//     that those rules judge it as they would the whole array, and keeping
//     a duplicate of an earlier item where its items must be unique; and
//     once the body is certainly refused, a valid item of an array whose
//     items need not be unique is kept as a reference to an earlier valid
//     one, which the validator judges alike.
//
// A schema the decode does not follow (not, anyOf, allOf, a oneOf whose
// branches do more than require members, a discriminator, an enum of
// objects or arrays, a count of properties, a document of OpenAPI 3.1) is
// decoded whole below that point; TestEveryBodyIsBounded holds every body
// of both documents to being followed all the way.

// shape is what the bounded decode follows of a schema.
type shape struct {
	s *openapi3.Schema
	// whole: the schema is not followed, its value is decoded whole.
	whole bool
	// kinds are the kinds of value the schema's type allows, as
	// jsonvalue.Reader names them; "" for any.
	kinds string
	// An object's members: the schemas of the known ones, whether others
	// are refused (closed) and, if not, the schema of the others (nil:
	// decoded whole).
	props  map[string]*shape
	closed bool
	others *shape
	// opaque: an object whose members the schema does not judge (no
	// properties, none required, any others); read past, kept empty.
	opaque bool
	// An array's items (nil: decoded whole, the validator does not judge
	// them), the number of first items always kept (minItems, and
	// maxItems+1), and whether they must be unique.
	items  *shape
	keep   int
	unique bool
}

// shapeOf is the shape of a body's schema; schemas met again (a recursive
// schema) share theirs.
func shapeOf(doc *openapi3.T, ref *openapi3.SchemaRef) *shape {
	if doc.IsOpenAPI31OrLater() {
		return &shape{whole: true} // another validator: not followed
	}
	return (&shapes{seen: map[*openapi3.Schema]*shape{}}).of(ref)
}

type shapes struct{ seen map[*openapi3.Schema]*shape }

func (c *shapes) of(ref *openapi3.SchemaRef) *shape {
	if ref == nil || ref.Value == nil {
		return &shape{whole: true}
	}
	s := ref.Value
	if sh := c.seen[s]; sh != nil {
		return sh
	}
	sh := &shape{s: s}
	c.seen[s] = sh
	if !followed(s) {
		sh.whole = true
		return sh
	}
	if s.Type != nil {
		for _, t := range s.Type.Slice() {
			switch t {
			case openapi3.TypeObject:
				sh.kinds += "{"
			case openapi3.TypeArray:
				sh.kinds += "["
			case openapi3.TypeString:
				sh.kinds += `"`
			case openapi3.TypeNumber, openapi3.TypeInteger:
				sh.kinds += "0"
			case openapi3.TypeBoolean:
				sh.kinds += "tf"
			case openapi3.TypeNull:
				sh.kinds += "n"
			}
		}
		if s.Nullable {
			sh.kinds += "n"
		}
	}
	if len(s.Properties) > 0 {
		sh.props = make(map[string]*shape, len(s.Properties))
		for name, p := range s.Properties {
			sh.props[name] = c.of(p)
		}
	}
	if has := s.AdditionalProperties.Has; has != nil && !*has {
		sh.closed = true
	} else if s.AdditionalProperties.Schema != nil {
		sh.others = c.of(s.AdditionalProperties.Schema)
	}
	sh.opaque = sh.props == nil && !sh.closed && sh.others == nil && len(s.Required) == 0 && len(s.Enum) == 0 &&
		strings.Trim(sh.kinds, "n") == "{"
	if s.Items != nil && s.Items.Value != nil {
		sh.items = c.of(s.Items)
		sh.keep = int(s.MinItems)
		if s.MaxItems != nil {
			sh.keep = max(sh.keep, int(min(*s.MaxItems, 1<<20))+1)
		}
		sh.unique = s.UniqueItems
	}
	return sh
}

// followed reports whether the bounded decode follows a schema: whether
// what it leaves out of a value changes nothing of the validator's verdict
// but the violations it counts.
func followed(s *openapi3.Schema) bool {
	if s.Not != nil || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Discriminator != nil ||
		s.MinProps != 0 || s.MaxProps != nil || s.Const != nil || len(s.PrefixItems) > 0 || len(s.PatternProperties) > 0 {
		return false
	}
	for _, b := range s.OneOf {
		// A branch that only requires members judges their presence,
		// which the decode never changes.
		if b.Value == nil {
			return false
		}
		only := *b.Value
		only.Required = nil
		if !only.IsEmpty() {
			return false
		}
	}
	for _, e := range s.Enum {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	if len(s.Enum) > 0 && (s.Properties != nil || s.Items != nil) {
		return false // an enum compares the whole value
	}
	return true
}

// boundedDecode is one body's bounded decode.
type boundedDecode struct {
	r      *jsonvalue.Reader
	opts   []openapi3.SchemaValidationOption
	exempt func(string) bool
	// doomed: a violation was met, the body is refused whatever follows.
	doomed bool
	seed   maphash.Seed
}

// decodeBounded decodes a JSON body that the schema of shape sh judges,
// keeping what the validator needs of it: the value, and how many
// violations the decode counted without keeping what makes them. err is
// json.Unmarshal's for a body that is not JSON.
func decodeBounded(data []byte, sh *shape, opts []openapi3.SchemaValidationOption, exempt func(string) bool) (v any, dropped int, err error) {
	r, err := jsonvalue.NewReader(data)
	if err != nil {
		return nil, 0, err
	}
	d := &boundedDecode{r: r, opts: opts, exempt: exempt}
	v, dropped = d.value(sh)
	if err := r.Err(); err != nil {
		return nil, 0, err
	}
	return v, dropped, nil
}

// value decodes the next value as sh follows it; dropped counts the
// violations within it that the value kept does not hold.
func (d *boundedDecode) value(sh *shape) (v any, dropped int) {
	if sh == nil || sh.whole {
		return d.r.Value(), 0
	}
	switch k := d.r.Kind(); {
	case (k == '{' || k == '[') && sh.kinds != "" && !containsByte(sh.kinds, k):
		// One violation of its type, whatever it holds.
		d.r.Skip()
		d.doomed = true
		if k == '{' {
			return map[string]any{}, 0
		}
		return []any{}, 0
	case k == '{' && sh.opaque:
		d.r.Skip()
		return map[string]any{}, 0
	case k == '{':
		return d.object(sh)
	case k == '[' && sh.items != nil && sh.items.s != nil:
		return d.array(sh)
	}
	return d.r.Value(), 0
}

func containsByte(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}

// object decodes an object: its known members as their schemas follow
// them, the others as the schema says of them; unknown ones of a closed
// object are read past, the first names kept (each the validator's
// violation), the others counted.
func (d *boundedDecode) object(sh *shape) (map[string]any, int) {
	m := map[string]any{}
	var unknown problem.FirstNames
	var dropped map[string]int // of each member, the last of a name given twice
	d.r.Object(func(name string) {
		child, known := sh.props[name]
		if !known && sh.closed {
			d.doomed = true
			kept, evicted, ok := unknown.Add(name)
			if ok {
				delete(m, evicted)
			}
			switch k := d.r.Kind(); {
			case !kept || k == '{' || k == '[':
				d.r.Skip()
				if kept {
					m[name] = nil
				}
			default:
				// A plain value costs nothing to keep, and a field
				// read before the validator runs may be named in
				// another case (the admission's modality).
				m[name] = d.r.Value()
			}
			return
		}
		if !known {
			child = sh.others
		}
		v, n := d.value(child)
		m[name] = v
		if n > 0 {
			if dropped == nil {
				dropped = map[string]int{}
			}
			dropped[name] = n
		} else if dropped != nil {
			delete(dropped, name)
		}
	})
	total := unknown.More()
	for _, n := range dropped {
		total += n
	}
	return m, total
}

// array decodes an array's items as their schema follows them, and keeps
// those the validator needs (see above).
func (d *boundedDecode) array(sh *shape) ([]any, int) {
	a := arrayDecode{d: d, sh: sh, items: []any{}}
	d.r.Array(a.item)
	return a.items, a.dropped
}

// arrayDecode is the state of one array's bounded decode.
type arrayDecode struct {
	d     *boundedDecode
	sh    *shape
	items []any
	left  []int // of each item kept, the violations left out of it
	next  int   // the index in the body of the next item
	// dropped counts the violations the items kept do not hold: those of
	// the items not kept, and those left out of the items kept.
	dropped int
	// Once the array is long, its items are judged as they are read:
	// judged of the kept ones, whose violations number found.
	judged, found int
	// dropping: every item from here on is counted, not kept.
	dropping bool
	// valid is a valid item kept, which stands for a valid item of a body
	// certainly refused.
	valid any
	// Where items must be unique: a hash of each item met (as the
	// validator compares them), until the items kept hold a duplicate.
	met     map[uint64]struct{}
	keptDup bool
}

// long is the length from which an array's items are judged as they are
// read: shorter ones are kept whole.
const long = problem.MaxViolations + 1

func (a *arrayDecode) item() {
	i := a.next
	a.next++
	v, n := a.d.value(a.sh.items)
	if a.dropping {
		a.drop(v, n, -1)
		return
	}
	if i < max(long, a.sh.keep) {
		a.keep(v, n)
		return
	}
	for ; a.judged < len(a.items); a.judged++ {
		c := a.violations(a.items[a.judged]) + a.left[a.judged]
		a.found += c
		if c == 0 && a.valid == nil {
			a.valid = a.items[a.judged]
		}
	}
	c := a.violations(v) + n
	if c > 0 {
		a.d.doomed = true
	}
	switch {
	case a.found > problem.MaxViolations:
		// The items kept fill the list: this one and every one after
		// it are counted.
		a.dropping = true
		a.drop(v, n, c)
		return
	case c == 0 && a.d.doomed && !a.sh.unique && a.valid != nil:
		a.items, a.left = append(a.items, a.valid), append(a.left, 0)
	default:
		a.keep(v, n)
		a.found += c
		if c == 0 && a.valid == nil {
			a.valid = v
		}
	}
	a.judged++
}

// keep keeps an item, n of whose violations were left out of it.
func (a *arrayDecode) keep(v any, n int) {
	a.duplicate(v) // marks it met, and a duplicate kept
	a.items, a.left = append(a.items, v), append(a.left, n)
	a.dropped += n
}

// drop counts an item past those kept, of c violations (-1: not judged
// yet), n of them left out of it; but keeps it when the items kept need
// it for a duplicate, past the list.
func (a *arrayDecode) drop(v any, n, c int) {
	if a.duplicate(v) {
		a.items, a.left = append(a.items, v), append(a.left, n)
		a.dropped += n
		return
	}
	if c < 0 {
		c = a.violations(v) + n
	}
	a.dropped += c
}

// duplicate reports whether v equals an item met before, where items must
// be unique and the items kept hold no duplicate yet (then v, kept, is
// one); it marks v met. Two items of the same hash that differ are taken
// for a duplicate: the validator, which compares them, finds none, and its
// verdict is the same.
func (a *arrayDecode) duplicate(v any) bool {
	if !a.sh.unique || a.keptDup {
		return false
	}
	if a.met == nil {
		a.met = map[uint64]struct{}{}
		a.d.seed = maphash.MakeSeed()
	}
	key, _ := json.Marshal(&v) // as the validator compares items
	h := maphash.Bytes(a.d.seed, key)
	if _, ok := a.met[h]; ok {
		a.keptDup, a.met = true, nil
		return true
	}
	a.met[h] = struct{}{}
	return false
}

// violations counts the validator's violations of one item.
func (a *arrayDecode) violations(v any) int {
	err := a.sh.items.s.VisitJSON(v, a.d.opts...)
	if err == nil {
		return 0
	}
	return countViolations(err, a.d.exempt)
}
