package store

import (
	"encoding/binary"
	"errors"
)

// The primitives of compact record encodings (the owner's hottest records
// are stored in binary instead of JSON): integers as varints, strings with
// their length, booleans as a byte. A record is a version byte, then its
// fields in a fixed order; Decoder reads them back in the same order.

// AppendString appends s with its length.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendBool appends v as one byte, 1 or 0.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// ErrShort is a Decoder's error when the record ends before its fields.
var ErrShort = errors.New("truncated record")

// Decoder reads what the appenders wrote; a problem sticks (Err): check it
// once, after the last field.
type Decoder struct {
	b   []byte
	err error
}

// NewDecoder reads the record data.
func NewDecoder(data []byte) Decoder { return Decoder{b: data} }

// Err is the first problem met, nil when none.
func (d *Decoder) Err() error { return d.err }

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.b) < 1 {
		d.err = ErrShort
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = ErrShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = ErrShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// String reads a string with its length.
func (d *Decoder) String() string {
	n := d.Uvarint()
	if n > uint64(len(d.b)) {
		d.err = ErrShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// Bytes reads a string with its length as the record's own bytes, without
// a copy: they are valid as long as the record is (in bbolt, for the
// transaction).
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if n > uint64(len(d.b)) {
		d.err = ErrShort
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}
