package media

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// glbDoc is the part of the glTF JSON the tests read.
type glbDoc struct {
	Asset struct {
		Version string `json:"version"`
	} `json:"asset"`
	Scene  *int `json:"scene"`
	Scenes []struct {
		Nodes []int `json:"nodes"`
	} `json:"scenes"`
	Nodes []struct {
		Mesh *int `json:"mesh"`
	} `json:"nodes"`
	Meshes []struct {
		Primitives []struct {
			Attributes map[string]int `json:"attributes"`
			Indices    *int           `json:"indices"`
			Material   *int           `json:"material"`
		} `json:"primitives"`
	} `json:"meshes"`
	Materials []struct {
		PBR struct {
			BaseColorFactor []float64 `json:"baseColorFactor"`
		} `json:"pbrMetallicRoughness"`
	} `json:"materials"`
	Accessors []struct {
		BufferView    int       `json:"bufferView"`
		ByteOffset    int       `json:"byteOffset"`
		ComponentType int       `json:"componentType"`
		Count         int       `json:"count"`
		Type          string    `json:"type"`
		Min           []float64 `json:"min"`
		Max           []float64 `json:"max"`
	} `json:"accessors"`
	BufferViews []struct {
		Buffer     int `json:"buffer"`
		ByteOffset int `json:"byteOffset"`
		ByteLength int `json:"byteLength"`
		ByteStride int `json:"byteStride"`
		Target     int `json:"target"`
	} `json:"bufferViews"`
	Buffers []struct {
		ByteLength int    `json:"byteLength"`
		URI        string `json:"uri"`
	} `json:"buffers"`
}

// checkGLB validates a GLB against the glTF 2.0 rules the generator must
// follow and returns its JSON document.
func checkGLB(t *testing.T, data []byte) glbDoc {
	t.Helper()
	var doc glbDoc
	le := binary.LittleEndian
	if len(data) < 28 || string(data[:4]) != "glTF" || le.Uint32(data[4:]) != 2 || int(le.Uint32(data[8:])) != len(data) {
		t.Fatalf("GLB header % x for %d bytes", data[:min(12, len(data))], len(data))
	}
	jsonLen := int(le.Uint32(data[12:]))
	if string(data[16:20]) != "JSON" || jsonLen%4 != 0 || 20+jsonLen+8 > len(data) {
		t.Fatalf("JSON chunk: type %q, %d bytes", data[16:20], jsonLen)
	}
	js := data[20 : 20+jsonLen]
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatalf("JSON chunk: %v\n%s", err, js)
	}
	if trimmed := bytes.TrimRight(js, " "); !json.Valid(trimmed) || bytes.ContainsAny(js[len(trimmed):], "\x00") {
		t.Error("JSON chunk must be padded with spaces")
	}
	binHdr := 20 + jsonLen
	binLen := int(le.Uint32(data[binHdr:]))
	if string(data[binHdr+4:binHdr+8]) != "BIN\x00" || binLen%4 != 0 || binHdr+8+binLen != len(data) {
		t.Fatalf("BIN chunk: type %q, %d bytes, file %d", data[binHdr+4:binHdr+8], binLen, len(data))
	}
	bin := data[binHdr+8:]

	if doc.Asset.Version != "2.0" {
		t.Errorf("asset.version %q", doc.Asset.Version)
	}
	if len(doc.Buffers) != 1 || doc.Buffers[0].URI != "" || doc.Buffers[0].ByteLength != binLen {
		t.Fatalf("buffers %+v, want one of %d bytes (the BIN chunk)", doc.Buffers, binLen)
	}
	if doc.Scene == nil || *doc.Scene != 0 || len(doc.Scenes) != 1 || len(doc.Scenes[0].Nodes) != 1 || len(doc.Nodes) != 1 || doc.Nodes[0].Mesh == nil {
		t.Fatalf("want one scene with one node holding a mesh")
	}
	if len(doc.Meshes) != 1 || len(doc.Meshes[0].Primitives) != 1 {
		t.Fatalf("want one mesh with one primitive")
	}
	if len(doc.Materials) != 1 || len(doc.Materials[0].PBR.BaseColorFactor) != 4 {
		t.Fatalf("want one material with a baseColorFactor")
	}
	for _, c := range doc.Materials[0].PBR.BaseColorFactor {
		if c < 0 || c > 1 {
			t.Errorf("baseColorFactor %v out of [0, 1]", doc.Materials[0].PBR.BaseColorFactor)
		}
	}
	for i, v := range doc.BufferViews {
		if v.Buffer != 0 || v.ByteOffset%4 != 0 || v.ByteLength <= 0 || v.ByteOffset+v.ByteLength > binLen {
			t.Errorf("bufferView %d %+v does not fit the %d-byte buffer", i, v, binLen)
		}
	}
	prim := doc.Meshes[0].Primitives[0]
	pos, okP := prim.Attributes["POSITION"]
	nrm, okN := prim.Attributes["NORMAL"]
	if !okP || !okN || prim.Indices == nil || prim.Material == nil {
		t.Fatalf("primitive %+v: want POSITION, NORMAL, indices and material", prim)
	}
	sizes := map[int]int{5126: 4, 5123: 2, 5125: 4}
	comps := map[string]int{"SCALAR": 1, "VEC3": 3}
	read := func(ai int) ([]float64, int) {
		a := doc.Accessors[ai]
		size, comp := sizes[a.ComponentType], comps[a.Type]
		if size == 0 || comp == 0 || a.BufferView >= len(doc.BufferViews) {
			t.Fatalf("accessor %d: %+v", ai, a)
		}
		v := doc.BufferViews[a.BufferView]
		start := v.ByteOffset + a.ByteOffset
		if start%size != 0 || a.ByteOffset+a.Count*size*comp > v.ByteLength {
			t.Fatalf("accessor %d (%d x %s) misaligned or longer than bufferView %d (%d bytes)", ai, a.Count, a.Type, a.BufferView, v.ByteLength)
		}
		if v.ByteLength-a.ByteOffset-a.Count*size*comp >= 4 {
			t.Errorf("bufferView %d has %d bytes, accessor %d uses %d", a.BufferView, v.ByteLength, ai, a.Count*size*comp)
		}
		out := make([]float64, a.Count*comp)
		for i := range out {
			off := start + i*size
			switch a.ComponentType {
			case 5126:
				out[i] = float64(math.Float32frombits(le.Uint32(bin[off:])))
			case 5123:
				out[i] = float64(le.Uint16(bin[off:]))
			}
		}
		return out, a.Count
	}
	p, nv := read(pos)
	n, nn := read(nrm)
	idx, ni := read(*prim.Indices)
	if nn != nv || ni%3 != 0 || ni == 0 {
		t.Fatalf("%d positions, %d normals, %d indices", nv, nn, ni)
	}
	if doc.BufferViews[doc.Accessors[pos].BufferView].Target != 34962 || doc.BufferViews[doc.Accessors[*prim.Indices].BufferView].Target != 34963 {
		t.Error("bufferView targets: want ARRAY_BUFFER for attributes, ELEMENT_ARRAY_BUFFER for indices")
	}
	pa := doc.Accessors[pos]
	if len(pa.Min) != 3 || len(pa.Max) != 3 {
		t.Fatal("POSITION accessor without min and max")
	}
	for c := 0; c < 3; c++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := c; i < len(p); i += 3 {
			lo, hi = min(lo, p[i]), max(hi, p[i])
		}
		if lo != pa.Min[c] || hi != pa.Max[c] {
			t.Errorf("POSITION component %d spans [%v, %v], accessor says [%v, %v]", c, lo, hi, pa.Min[c], pa.Max[c])
		}
	}
	for i := 0; i < len(n); i += 3 {
		if l := math.Sqrt(n[i]*n[i] + n[i+1]*n[i+1] + n[i+2]*n[i+2]); math.Abs(l-1) > 1e-6 {
			t.Fatalf("normal %d has length %v", i/3, l)
		}
	}
	for i := 0; i < len(idx); i += 3 {
		a, b, c := int(idx[i]), int(idx[i+1]), int(idx[i+2])
		if a >= nv || b >= nv || c >= nv || a == b || b == c || a == c {
			t.Fatalf("triangle %d: indices %d %d %d of %d vertices", i/3, a, b, c, nv)
		}
		// Counter-clockwise winding seen from outside: the geometric
		// normal points like the stored normal.
		v := func(k int) [3]float64 { return [3]float64{p[3*k], p[3*k+1], p[3*k+2]} }
		pa, pb, pc := v(a), v(b), v(c)
		e1 := [3]float64{pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]}
		e2 := [3]float64{pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]}
		cross := [3]float64{e1[1]*e2[2] - e1[2]*e2[1], e1[2]*e2[0] - e1[0]*e2[2], e1[0]*e2[1] - e1[1]*e2[0]}
		if cross[0]*n[3*a]+cross[1]*n[3*a+1]+cross[2]*n[3*a+2] <= 0 {
			t.Fatalf("triangle %d is wound against its normal", i/3)
		}
	}
	return doc
}

func TestGLB(t *testing.T) {
	kinds := map[string]bool{}
	for seed := uint64(0); seed < 40; seed++ {
		s := Spec{MimeType: "model/gltf-binary", Seed: seed, Prompt: "a wooden chair"}
		data, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		checkGLB(t, data)
		kind := newSolid(newRNG(s.Seed, s.Prompt, "model")).name
		kinds[strings.TrimRight(kind, "0123456789")] = true
		if !bytes.Contains(data, []byte(`"name":"`+kind+`"`)) {
			t.Errorf("seed %d: node not named %q", seed, kind)
		}
	}
	for _, k := range []string{"box", "pyramid", "octahedron", "prism"} {
		if !kinds[k] {
			t.Errorf("no %s among 40 seeds", k)
		}
	}
}

func TestGLBDeterministicAndDistinct(t *testing.T) {
	a, err := Generate(Spec{MimeType: "model/gltf-binary", Seed: 5, Prompt: "a vase"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(Spec{MimeType: "model/gltf-binary", Seed: 5, Prompt: "a vase"})
	c, _ := Generate(Spec{MimeType: "model/gltf-binary", Seed: 5, Prompt: "a lamp"})
	if !bytes.Equal(a, b) {
		t.Error("the same spec gave different bytes")
	}
	if bytes.Equal(a, c) {
		t.Error("two prompts gave the same model")
	}
	// Prompts with JSON-hostile and invalid UTF-8 text still give valid JSON.
	for _, p := range []string{`"quoted" \ back <tag> & co`, "bad \xff\xfe utf8", strings.Repeat("é", 200), ""} {
		data, err := Generate(Spec{MimeType: "model/gltf-binary", Seed: 1, Prompt: p})
		if err != nil {
			t.Fatal(err)
		}
		checkGLB(t, data)
	}
}
