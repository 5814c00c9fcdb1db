package store

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecoderReadsWhatWasAppended(t *testing.T) {
	b := []byte{9}
	b = binary.AppendUvarint(b, 1<<63+5)
	b = binary.AppendVarint(b, -12345)
	b = AppendString(b, "ünïcode")
	b = AppendBool(b, true)
	b = AppendBool(b, false)
	b = AppendString(b, "")
	d := NewDecoder(b)
	assert.Equal(t, byte(9), d.Byte())
	assert.Equal(t, uint64(1<<63+5), d.Uvarint())
	assert.Equal(t, int64(-12345), d.Varint())
	assert.Equal(t, "ünïcode", d.String())
	assert.Equal(t, byte(1), d.Byte())
	assert.Equal(t, byte(0), d.Byte())
	assert.Equal(t, "", d.String())
	assert.NoError(t, d.Err())

	for n := range len(b) {
		d := NewDecoder(b[:n])
		d.Byte()
		d.Uvarint()
		d.Varint()
		_ = d.String()
		d.Byte()
		d.Byte()
		_ = d.String()
		assert.ErrorIs(t, d.Err(), ErrShort, "cut at %d", n)
	}
	d = NewDecoder(AppendString(nil, "four")[:3])
	assert.Equal(t, "", d.String(), "a string longer than what is left")
	assert.ErrorIs(t, d.Err(), ErrShort)
}

// Bytes reads what String reads, as the record's own bytes.
func TestDecoderBytesShareTheRecord(t *testing.T) {
	b := AppendString(AppendString(nil, "title"), "")
	d := NewDecoder(b)
	title := d.Bytes()
	assert.Equal(t, "title", string(title))
	assert.Equal(t, &b[1], &title[0], "no copy")
	assert.Empty(t, d.Bytes())
	assert.NoError(t, d.Err())
	d = NewDecoder(AppendString(nil, "four")[:3])
	assert.Nil(t, d.Bytes(), "a string longer than what is left")
	assert.ErrorIs(t, d.Err(), ErrShort)
}
