package media

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// GLB layout (glTF 2.0 binary container).
const (
	glbMagic      = 0x46546C67 // "glTF"
	glbVersion    = 2
	chunkJSON     = 0x4E4F534A // "JSON"
	chunkBIN      = 0x004E4942 // "BIN\x00"
	glFloat       = 5126
	glUShort      = 5123
	arrayBuffer   = 34962
	elementArray  = 34963
	trianglesMode = 4
	// unit is 1.0 in the fixed point of mesh coordinates: multiples of
	// 1/1024 are exact in float32 and print exactly in JSON, so the
	// accessor bounds match the data bit for bit.
	unit = 1024
)

// ivec is a point or vector in 1/1024 units.
type ivec struct{ x, y, z int64 }

func (a ivec) sub(b ivec) ivec { return ivec{a.x - b.x, a.y - b.y, a.z - b.z} }
func (a ivec) dot(b ivec) int64 {
	return a.x*b.x + a.y*b.y + a.z*b.z
}
func (a ivec) cross(b ivec) ivec {
	return ivec{a.y*b.z - a.z*b.y, a.z*b.x - a.x*b.z, a.x*b.y - a.y*b.x}
}

// solid is a convex polyhedron: corner points and faces listing corners.
type solid struct {
	name    string
	corners []ivec
	faces   [][]int
}

// newSolid picks and sizes the shape of a seed and prompt.
func newSolid(r *rng) solid {
	sx := int64(r.between(unit/2, unit*3/2))
	sy := int64(r.between(unit/2, unit*3/2))
	sz := int64(r.between(unit/2, unit*3/2))
	switch r.intn(4) {
	case 0:
		s := solid{name: "box"}
		for i := 0; i < 8; i++ {
			c := ivec{-sx / 2, -sy / 2, -sz / 2}
			if i&1 != 0 {
				c.x = sx / 2
			}
			if i&2 != 0 {
				c.y = sy / 2
			}
			if i&4 != 0 {
				c.z = sz / 2
			}
			s.corners = append(s.corners, c)
		}
		s.faces = [][]int{{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}}
		return s
	case 1:
		s := solid{name: "pyramid", corners: []ivec{
			{-sx / 2, -sy / 2, -sz / 2}, {sx / 2, -sy / 2, -sz / 2}, {sx / 2, -sy / 2, sz / 2}, {-sx / 2, -sy / 2, sz / 2},
			{0, sy / 2, 0},
		}}
		s.faces = [][]int{{0, 1, 2, 3}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}}
		return s
	case 2:
		s := solid{name: "octahedron", corners: []ivec{
			{sx / 2, 0, 0}, {-sx / 2, 0, 0}, {0, sy / 2, 0}, {0, -sy / 2, 0}, {0, 0, sz / 2}, {0, 0, -sz / 2},
		}}
		for _, x := range []int{0, 1} {
			for _, y := range []int{2, 3} {
				for _, z := range []int{4, 5} {
					s.faces = append(s.faces, []int{x, y, z})
				}
			}
		}
		return s
	default:
		sides := r.between(3, 8)
		s := solid{name: fmt.Sprintf("prism%d", sides)}
		var bottom, top []int
		for i := 0; i < sides; i++ {
			turn := uint32(uint64(i) << 32 / uint64(sides))
			x := int64(sinQ15(turn+1<<30)) * (sx / 2) / 32767 // cosine
			z := int64(sinQ15(turn)) * (sz / 2) / 32767
			bottom = append(bottom, len(s.corners))
			s.corners = append(s.corners, ivec{x, -sy / 2, z})
			top = append(top, len(s.corners))
			s.corners = append(s.corners, ivec{x, sy / 2, z})
		}
		s.faces = append(s.faces, bottom, top)
		for i := 0; i < sides; i++ {
			j := (i + 1) % sides
			s.faces = append(s.faces, []int{bottom[i], bottom[j], top[j], top[i]})
		}
		return s
	}
}

// mesh flattens a solid into flat-shaded triangles: every face gets its
// own vertices carrying the face normal, wound counter-clockwise seen from
// outside.
func (s solid) mesh() (pos []ivec, normals [][3]float32, indices []uint16) {
	var centre ivec
	for _, c := range s.corners {
		centre.x += c.x
		centre.y += c.y
		centre.z += c.z
	}
	k := int64(len(s.corners))
	centre = ivec{centre.x / k, centre.y / k, centre.z / k}
	for _, f := range s.faces {
		a, b, c := s.corners[f[0]], s.corners[f[1]], s.corners[f[2]]
		n := b.sub(a).cross(c.sub(a))
		var mid ivec
		for _, i := range f {
			mid.x += s.corners[i].x
			mid.y += s.corners[i].y
			mid.z += s.corners[i].z
		}
		fl := int64(len(f))
		mid = ivec{mid.x / fl, mid.y / fl, mid.z / fl}
		face := append([]int(nil), f...)
		if n.dot(mid.sub(centre)) < 0 { // facing inwards: reverse
			for i, j := 0, len(face)-1; i < j; i, j = i+1, j-1 {
				face[i], face[j] = face[j], face[i]
			}
			n = ivec{-n.x, -n.y, -n.z}
		}
		// Integer components, then one square root and three divisions:
		// correctly rounded, so the same on every platform.
		l := math.Sqrt(float64(n.dot(n)))
		nf := [3]float32{float32(float64(n.x) / l), float32(float64(n.y) / l), float32(float64(n.z) / l)}
		first := uint16(len(pos))
		for _, i := range face {
			pos = append(pos, s.corners[i])
			normals = append(normals, nf)
		}
		for i := 1; i+1 < len(face); i++ {
			indices = append(indices, first, first+uint16(i), first+uint16(i+1))
		}
	}
	return pos, normals, indices
}

// glTF JSON, in the order the fields are written.
type (
	gltfDoc struct {
		Asset       gltfAsset        `json:"asset"`
		Scene       int              `json:"scene"`
		Scenes      []gltfScene      `json:"scenes"`
		Nodes       []gltfNode       `json:"nodes"`
		Meshes      []gltfMesh       `json:"meshes"`
		Materials   []gltfMaterial   `json:"materials"`
		Accessors   []gltfAccessor   `json:"accessors"`
		BufferViews []gltfBufferView `json:"bufferViews"`
		Buffers     []gltfBuffer     `json:"buffers"`
	}
	gltfAsset struct {
		Version   string     `json:"version"`
		Generator string     `json:"generator"`
		Extras    *gltfExtra `json:"extras,omitempty"`
	}
	// gltfExtra is the label of a labelled model, field by field.
	gltfExtra struct {
		ID     string `json:"id,omitempty"`
		Model  string `json:"model,omitempty"`
		Prompt string `json:"prompt,omitempty"`
	}
	gltfScene struct {
		Name  string `json:"name,omitempty"`
		Nodes []int  `json:"nodes"`
	}
	gltfNode struct {
		Name string `json:"name,omitempty"`
		Mesh int    `json:"mesh"`
	}
	gltfMesh struct {
		Name       string          `json:"name,omitempty"`
		Primitives []gltfPrimitive `json:"primitives"`
	}
	gltfPrimitive struct {
		Attributes map[string]int `json:"attributes"`
		Indices    int            `json:"indices"`
		Material   int            `json:"material"`
		Mode       int            `json:"mode"`
	}
	gltfMaterial struct {
		Name string  `json:"name,omitempty"`
		PBR  gltfPBR `json:"pbrMetallicRoughness"`
	}
	gltfPBR struct {
		BaseColorFactor [4]float64 `json:"baseColorFactor"`
		MetallicFactor  float64    `json:"metallicFactor"`
		RoughnessFactor float64    `json:"roughnessFactor"`
	}
	gltfAccessor struct {
		BufferView    int       `json:"bufferView"`
		ComponentType int       `json:"componentType"`
		Count         int       `json:"count"`
		Type          string    `json:"type"`
		Min           []float64 `json:"min,omitempty"`
		Max           []float64 `json:"max,omitempty"`
	}
	gltfBufferView struct {
		Buffer     int `json:"buffer"`
		ByteOffset int `json:"byteOffset"`
		ByteLength int `json:"byteLength"`
		Target     int `json:"target"`
	}
	gltfBuffer struct {
		ByteLength int `json:"byteLength"`
	}
)

// shortName keeps at most 64 runes of a prompt, as valid UTF-8, for the
// names in the file.
func shortName(p string) string {
	p = strings.ToValidUTF8(p, "\uFFFD")
	n := 0
	for i := range p {
		if n == 64 {
			return p[:i]
		}
		n++
	}
	return p
}

// generateGLB builds a GLB holding one flat-shaded solid.
func generateGLB(s Spec) ([]byte, error) {
	r := newRNG(s.Seed, s.Prompt, "model")
	sol := newSolid(r)
	pos, normals, indices := sol.mesh()
	if len(pos) > math.MaxUint16 {
		return nil, fmt.Errorf("media: GLB mesh of %d vertices is over the 16-bit index limit", len(pos))
	}

	// BIN chunk: positions, normals, indices, each view aligned to 4.
	bin := make([]byte, 0, len(pos)*24+len(indices)*2+4)
	lo := [3]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}
	hi := [3]int64{math.MinInt64, math.MinInt64, math.MinInt64}
	for _, p := range pos {
		for i, v := range [3]int64{p.x, p.y, p.z} {
			lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
			bin = binary.LittleEndian.AppendUint32(bin, math.Float32bits(float32(v)/unit))
		}
	}
	posLen := len(bin)
	for _, n := range normals {
		for _, v := range n {
			bin = binary.LittleEndian.AppendUint32(bin, math.Float32bits(v))
		}
	}
	normLen := len(bin) - posLen
	for _, i := range indices {
		bin = binary.LittleEndian.AppendUint16(bin, i)
	}
	idxLen := len(bin) - posLen - normLen
	for len(bin)%4 != 0 {
		bin = append(bin, 0)
	}

	hue := r.intn(360)
	c := hsv(hue, r.between(120, 230), r.between(150, 255))
	name, node := shortName(s.Prompt), sol.name
	var extra *gltfExtra
	if !s.Label.empty() {
		// The label names the scene and the node, which viewers list.
		name = shortName(s.Label.String())
		node = strings.TrimSpace(shortName(s.Label.title()) + " " + sol.name)
		extra = &gltfExtra{ID: s.Label.ID, Model: s.Label.Model, Prompt: strings.ToValidUTF8(s.Label.Text, "\uFFFD")}
	}
	doc := gltfDoc{
		Asset:  gltfAsset{Version: "2.0", Generator: "mediamock", Extras: extra},
		Scene:  0,
		Scenes: []gltfScene{{Name: name, Nodes: []int{0}}},
		Nodes:  []gltfNode{{Name: node, Mesh: 0}},
		Meshes: []gltfMesh{{Name: sol.name, Primitives: []gltfPrimitive{{
			Attributes: map[string]int{"POSITION": 0, "NORMAL": 1},
			Indices:    2,
			Material:   0,
			Mode:       trianglesMode,
		}}}},
		Materials: []gltfMaterial{{Name: "surface", PBR: gltfPBR{
			BaseColorFactor: [4]float64{float64(c.r) / 255, float64(c.g) / 255, float64(c.b) / 255, 1},
			MetallicFactor:  float64(r.intn(5)) / 8,
			RoughnessFactor: float64(r.between(3, 9)) / 10,
		}}},
		Accessors: []gltfAccessor{
			{BufferView: 0, ComponentType: glFloat, Count: len(pos), Type: "VEC3",
				Min: []float64{float64(lo[0]) / unit, float64(lo[1]) / unit, float64(lo[2]) / unit},
				Max: []float64{float64(hi[0]) / unit, float64(hi[1]) / unit, float64(hi[2]) / unit}},
			{BufferView: 1, ComponentType: glFloat, Count: len(normals), Type: "VEC3"},
			{BufferView: 2, ComponentType: glUShort, Count: len(indices), Type: "SCALAR"},
		},
		BufferViews: []gltfBufferView{
			{Buffer: 0, ByteOffset: 0, ByteLength: posLen, Target: arrayBuffer},
			{Buffer: 0, ByteOffset: posLen, ByteLength: normLen, Target: arrayBuffer},
			{Buffer: 0, ByteOffset: posLen + normLen, ByteLength: idxLen, Target: elementArray},
		},
		Buffers: []gltfBuffer{{ByteLength: len(bin)}},
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("media: encoding the glTF JSON: %w", err)
	}
	for len(js)%4 != 0 {
		js = append(js, ' ')
	}

	total := 12 + 8 + len(js) + 8 + len(bin)
	out := make([]byte, 0, total)
	out = binary.LittleEndian.AppendUint32(out, glbMagic)
	out = binary.LittleEndian.AppendUint32(out, glbVersion)
	out = binary.LittleEndian.AppendUint32(out, uint32(total))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	out = binary.LittleEndian.AppendUint32(out, chunkJSON)
	out = append(out, js...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(bin)))
	out = binary.LittleEndian.AppendUint32(out, chunkBIN)
	out = append(out, bin...)
	return out, nil
}
