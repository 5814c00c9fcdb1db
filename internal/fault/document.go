package fault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ControlDocument returns control.json with what the registry decides
// written into it: FaultSpec's kind, modality and parameters, FaultRule's
// (the same, with its id, via, matched and hits), the x-fault-kinds
// extension the dashboard builds its form from, and the kinds of the
// coverage's failure paths. Everything else of the document is kept as it
// is, byte for byte, in its order. go generate ./... writes it.
func ControlDocument(doc []byte) ([]byte, error) {
	v, err := decodeOrdered(doc)
	if err != nil {
		return nil, fmt.Errorf("control.json: %w", err)
	}
	root, ok := v.(*object)
	if !ok {
		return nil, errors.New("control.json: not an object")
	}
	schemas, ok := root.path("components", "schemas")
	if !ok {
		return nil, errors.New("control.json: no components.schemas")
	}
	spec, ok := schemas.get("FaultSpec").(*object)
	if !ok {
		return nil, errors.New("control.json: no FaultSpec schema")
	}
	rule, ok := schemas.get("FaultRule").(*object)
	if !ok {
		return nil, errors.New("control.json: no FaultRule schema")
	}
	specProps, ok := spec.get("properties").(*object)
	if !ok {
		return nil, errors.New("control.json: FaultSpec has no properties")
	}
	ruleProps, _ := rule.get("properties").(*object)

	// FaultSpec: kind, the targeting as written, then the parameters.
	props := &object{}
	props.set("kind", kindSchema())
	for _, t := range Targets {
		v := specProps.get(t)
		if v == nil {
			return nil, fmt.Errorf("control.json: FaultSpec has no %s", t)
		}
		if t == TargetModality {
			m := v.(*object)
			m.set("enum", anys(JobModalities))
		}
		props.set(t, v)
	}
	for _, p := range params {
		props.set(p.Name, p.schema())
	}
	spec.set("properties", props)
	spec.set("x-fault-kinds", kindsExtension())

	// FaultRule: its id and via, the spec's properties, matched and hits.
	rp := &object{}
	for _, k := range []string{"id", "via", "scope"} {
		v := ruleProps.get(k)
		if v == nil {
			return nil, fmt.Errorf("control.json: FaultRule has no %s", k)
		}
		rp.set(k, v)
	}
	via := rp.get("via").(*object)
	var vias []any
	var doc2 []string
	for _, s := range Shorthands() {
		vias = append(vias, s.Via)
		doc2 = append(doc2, fmt.Sprintf("`%s` (`%s`: %s)", s.Via, s.Endpoint, s.Doc))
	}
	via.set("enum", vias)
	via.set("description", "The shorthand endpoint that made the rule: "+strings.Join(doc2, "; ")+". Absent for a rule added with `POST /faults/rules`.")
	for _, f := range props.fields {
		rp.set(f.key, f.value)
	}
	for _, k := range []string{"matched", "hits"} {
		v := ruleProps.get(k)
		if v == nil {
			return nil, fmt.Errorf("control.json: FaultRule has no %s", k)
		}
		rp.set(k, v)
	}
	rule.set("properties", rp)

	// The coverage's failure paths: one per kind that strikes requests.
	if kind, ok := schemas.path("Coverage", "properties", "failure_paths", "items", "properties", "kind"); ok {
		kind.set("enum", anys(RequestKinds()))
	} else {
		return nil, errors.New("control.json: Coverage.failure_paths has no kind")
	}

	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// kindsNote closes the kinds' description.
func kindsNote() string {
	var breaking []string
	for _, k := range kinds {
		if k.about.Breaks {
			breaking = append(breaking, k.name)
		}
	}
	return "The delivery kinds that break the answer (" + codes(breaking) + ") strike after the operation ran: a creation that met one was made, and charged, " +
		"as when a connection drops in production. The simulation's kinds (" + codes(simulationKinds()) + ") strike jobs and deliveries, " +
		"not requests: a `" + Header + "` header cannot ask for them."
}

// namesAt are the kinds of a stage.
func namesAt(s Stage) []string {
	var out []string
	for _, k := range kinds {
		if k.about.Stage == s {
			out = append(out, k.name)
		}
	}
	return out
}

// simulationKinds are the kinds decided in the simulation.
func simulationKinds() []string {
	var out []string
	for _, k := range kinds {
		if k.about.Strikes == nil {
			out = append(out, k.name)
		}
	}
	return out
}

func kindSchema() *object {
	o := &object{}
	o.set("type", "string")
	o.set("enum", anys(Kinds()))
	var docs []string
	for _, k := range kinds {
		docs = append(docs, fmt.Sprintf("`%s`: %s", k.name, k.about.Doc))
	}
	o.set("description", strings.Join(docs, " ")+"\n\n"+kindsNote())
	return o
}

func kindsExtension() *object {
	o := &object{}
	for _, k := range kinds {
		row := &object{}
		row.set("stage", k.about.Stage.String())
		row.set("classes", anys(k.about.Strikes))
		row.set("params", anys(k.paramNames()))
		row.set("targets", anys(k.about.Targets))
		var required []string
		for _, p := range k.params {
			if p.required {
				required = append(required, p.Name)
			}
		}
		row.set("required", anys(required))
		row.set("doc", k.about.Doc)
		o.set(k.name, row)
	}
	return o
}

// object is a JSON object that keeps the order of its keys.
type object struct{ fields []field }

type field struct {
	key   string
	value any
}

func (o *object) get(key string) any {
	for _, f := range o.fields {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

// set replaces the value of key, in its place, or appends it.
func (o *object) set(key string, v any) {
	for i := range o.fields {
		if o.fields[i].key == key {
			o.fields[i].value = v
			return
		}
	}
	o.fields = append(o.fields, field{key, v})
}

func (o *object) path(keys ...string) (*object, bool) {
	cur := o
	for _, k := range keys {
		next, ok := cur.get(k).(*object)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	writeValue(&b, o, "")
	return b.Bytes(), nil
}

// inline is the object on one line, with a space after each colon and
// comma: `{"type": "integer", "enum": [403, 404]}`.
func (o *object) inline() string {
	var b bytes.Buffer
	writeValue(&b, o, " ")
	return b.String()
}

// writeValue writes v as JSON, sp after each colon and comma.
func writeValue(b *bytes.Buffer, v any, sp string) {
	switch v := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, f := range v.fields {
			if i > 0 {
				b.WriteString("," + sp)
			}
			writeJSON(b, f.key)
			b.WriteString(":" + sp)
			writeValue(b, f.value, sp)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteString("," + sp)
			}
			writeValue(b, x, sp)
		}
		b.WriteByte(']')
	default:
		writeJSON(b, v)
	}
}

// writeJSON writes a scalar as JSON, without escaping HTML.
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	b.Truncate(b.Len() - 1) // the encoder's newline
}

// decodeOrdered decodes JSON into objects that keep their keys' order,
// arrays, json.Number, strings, booleans and nil.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the document")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.fields = append(o.fields, field{k.(string), v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}
