package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/mediamock/mediamock/internal/store"
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
		b = store.AppendString(b, s)
	}
	b = binary.AppendVarint(b, a.Credits)
	for _, v := range []int{a.Width, a.Height, a.DurationSeconds} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendVarint(b, int64(a.CreatedAt))
	if m := a.Media; m != nil {
		b = append(b, 1)
		for _, s := range []string{m.AspectRatio, m.Resolution, m.Voice, m.Language} {
			b = store.AppendString(b, s)
		}
		b = store.AppendBool(b, m.Audio)
		b = binary.AppendVarint(b, int64(m.Index))
		b = binary.AppendUvarint(b, m.SourceAsset)
	} else {
		b = append(b, 0)
	}
	if p := a.Error; p != nil {
		b = append(b, 1)
		b = store.AppendString(b, p.Code)
		b = store.AppendString(b, p.Message)
	} else {
		b = append(b, 0)
	}
	return b
}

func decodeAsset(data []byte, a *Asset) error {
	d := store.NewDecoder(data)
	if v := d.Byte(); v != assetCodecVersion {
		return fmt.Errorf("asset record version %d, want %d", v, assetCodecVersion)
	}
	a.ID, a.WorkspaceID, a.JobID, a.ProjectID = d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uvarint()
	a.Source, a.Kind, a.Status, a.Model = d.String(), d.String(), d.String(), d.String()
	a.Title, a.Prompt, a.MimeType = d.String(), d.String(), d.String()
	a.Credits = d.Varint()
	a.Width, a.Height, a.DurationSeconds = int(d.Varint()), int(d.Varint()), int(d.Varint())
	a.CreatedAt = Stamp(d.Varint())
	a.Media, a.Error = nil, nil
	if d.Byte() == 1 {
		m := &Media{AspectRatio: d.String(), Resolution: d.String(), Voice: d.String(), Language: d.String()}
		m.Audio = d.Byte() == 1
		m.Index = int(d.Varint())
		m.SourceAsset = d.Uvarint()
		a.Media = m
	}
	if d.Byte() == 1 {
		a.Error = &Problem{Code: d.String(), Message: d.String()}
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("asset record: %w", err)
	}
	return nil
}
