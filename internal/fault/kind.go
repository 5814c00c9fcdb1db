package fault

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A Kind is a fault kind, in one file of this package: the struct of its
// parameters (exported fields with JSON tags, declared with their schema
// facts by its Params method; a parameter several kinds take is a field
// of a small struct they embed, declared there once), what it says of
// itself (About), its own checks (Check, when it has some), and the method
// its stage calls (Deliver, Delay, Admit, ...). It registers itself by
// name in an init:
//
//	func init() { Register(Truncate, new(truncate)) }
//
// Its rules hold it decoded from their spec; a kind may keep state of its
// own beside its parameters (an unexported field), under the rules' lock.
type Kind interface {
	// About says what the kind is, for the registry.
	About() About
}

// About is what a kind says of itself beside its parameters.
type About struct {
	// Stage is where the kind is decided; the kind implements that
	// stage's method.
	Stage Stage
	// Strikes are the path classes of the requests the kind strikes
	// (Classes, or some of them); nil for a kind decided in the
	// simulation, which strikes jobs or deliveries.
	Strikes []string
	// Targets are the targeting fields the kind takes (TargetOperation,
	// ...); a kind that strikes requests takes class too.
	Targets []string
	// Modalities are those a rule may target, when it takes modality;
	// nil: Modalities.
	Modalities []string
	// Doc says what the kind does, for control.json, the dashboard's form
	// and the reference: a sentence, its parameters in `code`.
	Doc string
	// Meets says what a client meets, for the reference's table.
	Meets string
	// Breaks says the answer never reaches the client whole (a delivery
	// kind that cuts it), for the client report.
	Breaks bool
	// Shorthands are the control endpoints that make rules of the kind.
	Shorthands []Shorthand
}

// A Shorthand is a control endpoint that makes rules of one kind; a rule
// it made names it in its Via.
type Shorthand struct {
	Via, Endpoint, Doc string
	// Kind is the kind it makes rules of (the registry fills it).
	Kind string
}

// A checker is a kind with checks of its own, over several of its
// parameters, beyond what each parameter's facts say.
type checker interface {
	// Check reports what is wrong with the kind's parameters.
	Check(c *Checks)
}

// A paramser declares the parameters of a struct: a kind's own, or those
// of a small struct kinds embed.
type paramser interface {
	Params() []*Param
}

// registered is a kind in the registry.
type registered struct {
	name   string
	typ    reflect.Type // the kind's struct
	about  About
	params []*kindParam // its parameters, in the order of its fields
}

// kindParam is a parameter of one kind: where the kind's struct has it,
// and what the kind says of it besides the parameter's own facts.
type kindParam struct {
	*Param
	index    []int  // in the kind's struct
	note     string // the kind's own words on a parameter it shares
	required bool
}

// the registry: every kind, in the order the documents list them (by
// stage, then by name), and every parameter, in the order the kinds first
// take them.
var (
	kinds    []*registered
	byName   = map[string]*registered{}
	params   []*Param
	byParam  = map[string]*Param{}
	problems []string // what does not hold of the registered kinds (a stale FaultSpec)
)

// Register adds a kind to the registry under name; kind is a pointer to
// its struct. It panics when the kind does not hold together (a parameter
// without its facts or declared twice, a stage whose method it lacks):
// each kind registers from an init, so any test of the package says so.
func Register(name string, kind Kind) {
	t := reflect.TypeOf(kind)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic("fault: kind " + name + " is not a pointer to a struct")
	}
	if byName[name] != nil {
		panic("fault: kind " + name + " is registered twice")
	}
	proto := reflect.New(t.Elem())
	k := proto.Interface().(Kind)
	r := &registered{name: name, typ: t.Elem(), about: k.About()}
	if r.about.Stage < 0 || r.about.Stage >= stages || !implements(k, r.about.Stage) {
		panic(fmt.Sprintf("fault: kind %s does not implement the method of its stage %s", name, r.about.Stage))
	}
	for i := range r.about.Shorthands {
		r.about.Shorthands[i].Kind = name
	}

	// The declarations: those of each struct it embeds, then its own.
	var decls []*Param
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				if p, ok := v.Field(i).Addr().Interface().(paramser); ok {
					decls = append(decls, p.Params()...)
				}
				walk(v.Field(i))
			}
		}
	}
	walk(proto.Elem())
	if p, ok := k.(paramser); ok {
		decls = append(decls, p.Params()...)
	}

	// Its parameters: every exported field with a JSON name, in order.
	for _, f := range fields(proto.Elem(), nil) {
		kp := &kindParam{index: f.index}
		for _, d := range decls {
			if d.ptr == nil || reflect.ValueOf(d.ptr).Pointer() != f.addr || reflect.TypeOf(d.ptr).Elem() != f.field.Type {
				continue
			}
			if d.note {
				kp.note, kp.required = d.doc, kp.required || d.required
			} else if kp.Param == nil {
				kp.Param = d
				kp.required = kp.required || d.required
			}
		}
		if kp.Param == nil {
			panic(fmt.Sprintf("fault: kind %s has a parameter %s without its facts: declare it in a Params method (Field(&k.%s, ...))", name, f.name, f.field.Name))
		}
		kp.Param = declare(kp.Param, f)
		r.params = append(r.params, kp)
	}
	at, _ := slices.BinarySearchFunc(kinds, r, func(a, b *registered) int {
		return cmp.Or(cmp.Compare(a.about.Stage, b.about.Stage), strings.Compare(a.name, b.name))
	})
	kinds = slices.Insert(kinds, at, r)
	byName[name] = r
	// The parameters' order follows the kinds'.
	params = params[:0]
	seen := map[*Param]bool{}
	for _, k := range kinds {
		for _, p := range k.params {
			if !seen[p.Param] {
				seen[p.Param] = true
				params = append(params, p.Param)
			}
		}
	}
}

// paramField is a parameter field of a kind's struct.
type paramField struct {
	name  string // its JSON name
	field reflect.StructField
	index []int
	addr  uintptr
	owner reflect.Type // the struct that declares it
}

// fields lists the parameter fields of a struct value, those of the
// structs it embeds in their place.
func fields(v reflect.Value, at []int) []paramField {
	var out []paramField
	for i := range v.NumField() {
		f := v.Type().Field(i)
		index := append(slices.Clone(at), i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, fields(v.Field(i), index)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		out = append(out, paramField{name: name, field: f, index: index, addr: v.Field(i).Addr().Pointer(), owner: v.Type()})
	}
	return out
}

// declare makes p the registry's parameter of field f, or returns the one
// already there: the same field of the same struct, which another kind
// embeds too. A name declared by another struct's field panics: a
// parameter is declared once, in a struct the kinds that take it embed.
func declare(p *Param, f paramField) *Param {
	if have := byParam[f.name]; have != nil {
		if have.owner != f.owner || have.goName != f.field.Name {
			panic(fmt.Sprintf("fault: parameter %s is declared by %s.%s and by %s.%s: declare it once, in a struct the kinds that take it embed",
				f.name, have.owner, have.goName, f.owner, f.field.Name))
		}
		return have
	}
	p.Name, p.goName, p.goType, p.owner, p.jsonTag = f.name, f.field.Name, f.field.Type, f.owner, f.field.Tag.Get("json")
	p.ptr = nil // the prototype's field: nothing holds it after
	p.schemaType = schemaType(f.field.Type)
	if p.schemaType == "" {
		panic(fmt.Sprintf("fault: parameter %s has the type %s, which no JSON schema type fits", f.name, f.field.Type))
	}
	if sf, ok := reflect.TypeFor[Spec]().FieldByName(f.field.Name); ok && sf.Type == f.field.Type {
		p.specIndex = sf.Index
	} else {
		problems = append(problems, fmt.Sprintf("controlapi.FaultSpec has no field %s %s for the parameter %s: run go generate ./...", f.field.Name, f.field.Type, f.name))
	}
	byParam[f.name] = p
	return p
}

// Problems lists what does not hold of the registered kinds: a
// parameter controlapi.FaultSpec lacks (it is generated from the kinds;
// until it is, the parameter cannot be given).
func Problems() []string { return slices.Clone(problems) }

// Kinds are the names of the kinds, in the order the documents list them:
// by stage, then by name.
func Kinds() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// RequestKinds are the kinds that strike requests (not jobs or deliveries
// in the simulation): those a Mock-Fault header may ask for, and the
// failure paths of the coverage.
func RequestKinds() []string {
	var out []string
	for _, k := range kinds {
		if k.about.Strikes != nil {
			out = append(out, k.name)
		}
	}
	return out
}

// Breaks reports whether a fault of kind never lets its answer reach the
// client whole.
func Breaks(kind string) bool {
	r := lookup(kind)
	return r != nil && r.about.Breaks
}

// Shorthands are the control endpoints that make rules, in the kinds'
// order.
func Shorthands() []Shorthand {
	var out []Shorthand
	for _, k := range kinds {
		out = append(out, k.about.Shorthands...)
	}
	return out
}

// lookup is the registration of a kind, nil when there is none.
func lookup(name string) *registered { return byName[name] }

// modalities are those a rule of the kind may target.
func (r *registered) modalities() []string {
	if r.about.Modalities != nil {
		return r.about.Modalities
	}
	return Modalities
}

// takes reports whether the kind takes the targeting field t.
func (r *registered) takes(t string) bool {
	return slices.Contains(r.about.Targets, t) || t == TargetClass && r.about.Strikes != nil
}

// param is the kind's parameter of that name, nil when it takes none.
func (r *registered) param(name string) *kindParam {
	for _, p := range r.params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// paramNames are the names of the kind's parameters.
func (r *registered) paramNames() []string {
	out := make([]string, len(r.params))
	for i, p := range r.params {
		out[i] = p.Name
	}
	return out
}

// decode is the kind's struct with the parameters of a spec of it.
func (r *registered) decode(s *Spec) Kind {
	v := reflect.New(r.typ)
	sv := reflect.ValueOf(s).Elem()
	for _, p := range r.params {
		if p.specIndex != nil {
			v.Elem().FieldByIndex(p.index).Set(sv.FieldByIndex(p.specIndex))
		}
	}
	return v.Interface().(Kind)
}
