package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Assets are the hottest records (every page of the library decodes 20 of
// them), so they are stored in a compact binary form instead of JSON: a
// version byte, then every field in a fixed order, integers as varints and
// strings with their length.
const assetCodecVersion = 1

func encodeAsset(a *Asset) []byte {
	b := make([]byte, 0, 96+len(a.Prompt)+len(a.Title))
	b = append(b, assetCodecVersion)
	for _, v := range []uint64{a.ID, a.WorkspaceID, a.JobID, a.ProjectID} {
		b = binary.AppendUvarint(b, v)
	}
	for _, s := range []string{a.Source, a.Kind, a.Status, a.Model, a.Title, a.Prompt, a.MimeType} {
		b = appendString(b, s)
	}
	b = binary.AppendVarint(b, a.Credits)
	for _, v := range []int{a.Width, a.Height, a.DurationSeconds} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendVarint(b, int64(a.CreatedAt))
	if m := a.Media; m != nil {
		b = append(b, 1)
		for _, s := range []string{m.AspectRatio, m.Resolution, m.Voice, m.Language} {
			b = appendString(b, s)
		}
		b = append(b, boolByte(m.Audio))
		b = binary.AppendVarint(b, int64(m.Index))
		b = binary.AppendUvarint(b, m.SourceAsset)
	} else {
		b = append(b, 0)
	}
	if p := a.Error; p != nil {
		b = append(b, 1)
		b = appendString(b, p.Code)
		b = appendString(b, p.Message)
	} else {
		b = append(b, 0)
	}
	return b
}

func decodeAsset(data []byte, a *Asset) error {
	d := decoder{b: data}
	if v := d.byte(); v != assetCodecVersion {
		return fmt.Errorf("asset record version %d, want %d", v, assetCodecVersion)
	}
	a.ID, a.WorkspaceID, a.JobID, a.ProjectID = d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()
	a.Source, a.Kind, a.Status, a.Model = d.string(), d.string(), d.string(), d.string()
	a.Title, a.Prompt, a.MimeType = d.string(), d.string(), d.string()
	a.Credits = d.varint()
	a.Width, a.Height, a.DurationSeconds = int(d.varint()), int(d.varint()), int(d.varint())
	a.CreatedAt = Stamp(d.varint())
	a.Media, a.Error = nil, nil
	if d.byte() == 1 {
		m := &Media{AspectRatio: d.string(), Resolution: d.string(), Voice: d.string(), Language: d.string()}
		m.Audio = d.byte() == 1
		m.Index = int(d.varint())
		m.SourceAsset = d.uvarint()
		a.Media = m
	}
	if d.byte() == 1 {
		a.Error = &Problem{Code: d.string(), Message: d.string()}
	}
	if d.err != nil {
		return fmt.Errorf("asset record: %w", d.err)
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

var errShort = errors.New("truncated record")

// decoder reads what the encoder wrote; the first problem sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.err = errShort
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
