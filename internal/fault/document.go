package fault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ControlDocument returns control.json with what the kind table decides
// written into it: FaultSpec's kind, modality and parameters, FaultRule's
// (the same, with its id, via, matched and hits), the x-fault-kinds
// extension the dashboard builds its form from, and the kinds of the
// coverage's failure paths. Everything else of the
// document is kept as it is, byte for byte, in its order.
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
		props.set(p.Name, paramSchema(p))
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
	for _, s := range Shorthands {
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
		kind.set("enum", anys(RequestKinds))
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

// deliveryNote closes the kinds' description.
var deliveryNote = "The delivery kinds (`reset`, `empty_reply`, `truncate`, `garbage_then_close`) strike after the operation ran: a creation that met one was made, and charged, as when a connection drops in production. The simulation's kinds (" + simulationKinds() + ") strike jobs and deliveries, not requests: a `Mock-Fault` header cannot ask for them."

// simulationKinds lists the kinds decided in the simulation, as code.
func simulationKinds() string {
	var out []string
	for _, k := range kinds {
		if k.Classes == nil {
			out = append(out, "`"+k.Name+"`")
		}
	}
	return strings.Join(out, ", ")
}

func kindSchema() *object {
	o := &object{}
	o.set("type", "string")
	o.set("enum", anys(Kinds))
	var docs []string
	for _, k := range kinds {
		docs = append(docs, fmt.Sprintf("`%s`: %s", k.Name, k.Doc))
	}
	o.set("description", strings.Join(docs, " ")+"\n\n"+deliveryNote)
	return o
}

func paramSchema(p Param) *object {
	v, err := decodeOrdered([]byte(p.Schema))
	if err != nil {
		panic("fault: the schema of " + p.Name + ": " + err.Error())
	}
	o := v.(*object)
	out := &object{}
	out.set("title", p.Title)
	for _, f := range o.fields {
		out.set(f.key, f.value)
	}
	out.set("description", p.Doc)
	return out
}

// stageNames name the stages in x-fault-kinds.
var stageNames = map[Stage]string{Admit: "admit", Delay: "delay", Deliver: "deliver", Access: "access",
	Session: "session", Call: "call", Shape: "shape", Fate: "fate", Publish: "publish"}

// stageDocs say when each stage decides its kinds, for the fault kinds'
// reference (docs/reference/fault-kinds.md).
var stageDocs = map[Stage]string{
	Admit:   "before the operation runs, after authentication, the rate window and the scope: nothing changes",
	Delay:   "when the answer is ready to go, before its head is sent",
	Deliver: "while the answer is sent: the operation has run (a creation that met one was made, and charged)",
	Access:  "when a file is asked for",
	Session: "when an MCP request arrives, before it is handled",
	Call:    "when an MCP tool call has run, before its result is sent",
	Shape:   "when the answer is ready to go, before its delivery",
	Fate:    "when a job is created, in the simulation: the creation answers as ever (but for `moderation` at `creation`, a 422), the job fails later",
	Publish: "when a publication delivers to a platform, in the simulation",
}

func kindsExtension() *object {
	o := &object{}
	for _, k := range kinds {
		row := &object{}
		row.set("stage", stageNames[k.Stage])
		row.set("classes", anys(k.Classes))
		row.set("params", anys(k.Params))
		row.set("targets", anys(k.Targets))
		row.set("doc", k.Doc)
		o.set(k.Name, row)
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
	b.WriteByte('{')
	for i, f := range o.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, f.key)
		b.WriteByte(':')
		if err := writeValue(&b, f.value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeValue(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case *object:
		raw, err := v.MarshalJSON()
		if err != nil {
			return err
		}
		b.Write(raw)
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		writeJSON(b, v)
	}
	return nil
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
