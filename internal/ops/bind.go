package ops

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// A handler's input is bound from the call's validated input, not parsed
// again: the body's decoded value (contract.Body.Value) is walked into the
// input's fields as encoding/json would have filled them from the same
// document, and the parameters' strings are parsed into theirs.
//
//	type input struct {
//		ID          uint64 `path:"id"`
//		WaitSeconds int    `query:"wait_seconds"`
//		sim.GenerationRequest        // the body's properties, by their json tags
//		Form *contract.Form          // a multipart body, as read
//	}
//
// A body's strings are copies, as encoding/json makes them, but for a
// wire.DataURIString, which shares the body's bytes (a 10 MB data URI is
// not held twice).

// binder fills one input type.
type binder struct {
	params []paramField
	body   *objectPlan // nil: the input takes no JSON body
	form   []int       // the index of the *contract.Form field; nil: none
}

// paramField is a field bound from a path or query parameter.
type paramField struct {
	index  []int
	offset uintptr // from the input's start
	name   string
	path   bool // a path parameter, else a query one
	kind   reflect.Kind
}

// objectPlan binds a JSON object into a struct, by the fields' json names.
type objectPlan struct {
	fields map[string]fieldPlan
}

type fieldPlan struct {
	index []int
	set   setter
}

// setter sets v (a settable value of its type) from a decoded JSON value.
type setter func(v reflect.Value, x any) error

var (
	formType      = reflect.TypeFor[*contract.Form]()
	dataURIType   = reflect.TypeFor[wire.DataURIString]()
	textUnmarshal = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// binderOf plans the binding of In once.
func binderOf[In any]() *binder {
	t := reflect.TypeFor[In]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("ops: the input %s of a handler is not a struct", t))
	}
	b := &binder{}
	plan := &objectPlan{fields: map[string]fieldPlan{}}
	b.walk(t, nil, plan)
	if len(plan.fields) > 0 {
		b.body = plan
	}
	for i := range b.params {
		p := &b.params[i]
		st := t
		for _, j := range p.index {
			f := st.Field(j)
			p.offset += f.Offset
			st = f.Type
		}
	}
	return b
}

// walk plans the fields of struct t (at index prefix), embedded ones
// included.
func (b *binder) walk(t reflect.Type, prefix []int, plan *objectPlan) {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		if name, ok := f.Tag.Lookup("path"); ok {
			b.params = append(b.params, paramField{index: index, name: name, path: true, kind: paramKind(t, f)})
			continue
		}
		if name, ok := f.Tag.Lookup("query"); ok {
			b.params = append(b.params, paramField{index: index, name: name, kind: paramKind(t, f)})
			continue
		}
		if f.Type == formType {
			b.form = index
			continue
		}
		tag, hasTag := f.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && tag == "-" {
			continue
		}
		if f.Anonymous && !hasTag && f.Type.Kind() == reflect.Struct {
			b.walk(f.Type, index, plan) // its fields are promoted
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		plan.fields[name] = fieldPlan{index: index, set: setterOf(f.Type)}
	}
}

func paramKind(t reflect.Type, f reflect.StructField) reflect.Kind {
	switch k := f.Type.Kind(); k {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Float64:
		return k
	}
	panic(fmt.Sprintf("ops: parameter field %s.%s is a %s", t, f.Name, f.Type))
}

// setterOf plans how a value of type t is set from a decoded JSON value.
func setterOf(t reflect.Type) setter {
	if t == dataURIType {
		return func(v reflect.Value, x any) error {
			s, ok := x.(string)
			if !ok {
				return mismatch(x, t)
			}
			v.SetString(s) // shares the body's bytes
			return nil
		}
	}
	if reflect.PointerTo(t).Implements(textUnmarshal) {
		return func(v reflect.Value, x any) error {
			s, ok := x.(string)
			if !ok {
				return mismatch(x, t)
			}
			if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				return invalidJSON(err.Error())
			}
			return nil
		}
	}
	switch t.Kind() {
	case reflect.String:
		return func(v reflect.Value, x any) error {
			s, ok := x.(string)
			if !ok {
				return mismatch(x, t)
			}
			v.SetString(strings.Clone(s)) // not the body's bytes: the string may be kept
			return nil
		}
	case reflect.Bool:
		return func(v reflect.Value, x any) error {
			b, ok := x.(bool)
			if !ok {
				return mismatch(x, t)
			}
			v.SetBool(b)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value, x any) error {
			f, ok := x.(float64)
			if !ok || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 || v.OverflowInt(int64(f)) {
				return mismatch(x, t)
			}
			v.SetInt(int64(f))
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(v reflect.Value, x any) error {
			f, ok := x.(float64)
			if !ok || f != math.Trunc(f) || f < 0 || f >= math.MaxUint64 || v.OverflowUint(uint64(f)) {
				return mismatch(x, t)
			}
			v.SetUint(uint64(f))
			return nil
		}
	case reflect.Float32, reflect.Float64:
		return func(v reflect.Value, x any) error {
			f, ok := x.(float64)
			if !ok || v.OverflowFloat(f) {
				return mismatch(x, t)
			}
			v.SetFloat(f)
			return nil
		}
	case reflect.Pointer:
		elem := setterOf(t.Elem())
		return func(v reflect.Value, x any) error {
			if x == nil {
				v.SetZero()
				return nil
			}
			p := reflect.New(t.Elem())
			if err := elem(p.Elem(), x); err != nil {
				return err
			}
			v.Set(p)
			return nil
		}
	case reflect.Slice:
		elem := setterOf(t.Elem())
		return func(v reflect.Value, x any) error {
			if x == nil {
				v.SetZero()
				return nil
			}
			items, ok := x.([]any)
			if !ok {
				return mismatch(x, t)
			}
			s := reflect.MakeSlice(t, len(items), len(items))
			for i, item := range items {
				if err := elem(s.Index(i), item); err != nil {
					return err
				}
			}
			v.Set(s)
			return nil
		}
	case reflect.Struct:
		plan := &objectPlan{fields: map[string]fieldPlan{}}
		(&binder{}).walk(t, nil, plan)
		return func(v reflect.Value, x any) error {
			m, ok := x.(map[string]any)
			if !ok {
				return mismatch(x, t)
			}
			return plan.bind(v, m)
		}
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return func(v reflect.Value, x any) error {
				if x != nil {
					v.Set(reflect.ValueOf(x))
				}
				return nil
			}
		}
	}
	panic(fmt.Sprintf("ops: the binder takes no field of type %s", t))
}

// bind sets the fields of struct v from object m: a property without a
// field is left (the contract refused it, if the schema does).
func (p *objectPlan) bind(v reflect.Value, m map[string]any) error {
	for name, x := range m {
		f, ok := p.fields[name]
		if !ok {
			continue
		}
		if x == nil {
			continue // null: as encoding/json, the field keeps its value
		}
		if err := f.set(v.FieldByIndex(f.index), x); err != nil {
			return err
		}
	}
	return nil
}

// bind fills in (a pointer to the input) from the call's input.
func (b *binder) bind(in any, input *contract.Input) error {
	v := reflect.ValueOf(in)
	b.bindParams(v.UnsafePointer(), input)
	v = v.Elem()
	switch x := input.Body.Value.(type) {
	case *contract.Form:
		if b.form != nil {
			v.FieldByIndex(b.form).Set(reflect.ValueOf(x))
		}
	case map[string]any:
		if b.body != nil {
			return b.body.bind(v, x)
		}
	}
	return nil
}

// bindParams sets the parameter fields of the input at p: each is written
// at its offset, as its kind says, without reflection (an input of
// parameters alone stays on its caller's stack). A value that does not
// parse leaves the field at its zero value, the operation's default: the
// contract validated it.
func (b *binder) bindParams(p unsafe.Pointer, input *contract.Input) {
	for i := range b.params {
		f := &b.params[i]
		var s string
		if f.path {
			s = input.Path[f.name]
		} else {
			s = input.Query.Get(f.name)
		}
		if s == "" {
			continue
		}
		at := unsafe.Add(p, f.offset)
		switch f.kind {
		case reflect.String:
			*(*string)(at) = s
		case reflect.Bool:
			if v, err := strconv.ParseBool(s); err == nil {
				*(*bool)(at) = v
			}
		case reflect.Int:
			if n, err := strconv.ParseInt(s, 10, strconv.IntSize); err == nil {
				*(*int)(at) = int(n)
			}
		case reflect.Int64:
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				*(*int64)(at) = n
			}
		case reflect.Int32:
			if n, err := strconv.ParseInt(s, 10, 32); err == nil {
				*(*int32)(at) = int32(n)
			}
		case reflect.Uint:
			if n, err := strconv.ParseUint(s, 10, strconv.IntSize); err == nil {
				*(*uint)(at) = uint(n)
			}
		case reflect.Uint64:
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				*(*uint64)(at) = n
			}
		case reflect.Uint32:
			if n, err := strconv.ParseUint(s, 10, 32); err == nil {
				*(*uint32)(at) = uint32(n)
			}
		case reflect.Float64:
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				*(*float64)(at) = v
			}
		}
	}
}

// mismatch is the error of a value the input's field cannot hold, worded
// as encoding/json words it: the contract lets none through that the
// input's types do not take, so it says the two disagree.
func mismatch(x any, t reflect.Type) error {
	what := "value"
	switch x := x.(type) {
	case string:
		what = "string"
	case float64:
		what = "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		what = "bool"
	case []any:
		what = "array"
	case map[string]any:
		what = "object"
	}
	return invalidJSON("json: cannot unmarshal " + what + " into Go value of type " + t.String())
}

func invalidJSON(reason string) error {
	return &sim.Error{Kind: sim.EINVALID, Code: "invalid_json", Message: "The body is not valid JSON: " + reason + "."}
}
