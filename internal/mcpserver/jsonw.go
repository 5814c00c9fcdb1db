package mcpserver

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// The server writes its messages by appending to a byte slice: what it
// writes is a handful of fixed shapes, and the large parts of a result (an
// operation's JSON body, a tool's input schema, a file's base64) are
// spliced in as they are, not encoded again.

// appendString appends s as a JSON string exactly as encoding/json writes
// it: invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped, and, when html
// is set, <, > and & escaped too (json.Marshal's default; an Encoder with
// SetEscapeHTML(false) leaves them).
func appendString[Bytes []byte | string](dst []byte, s Bytes, html bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		c, size := utf8.DecodeRuneInString(string(s[i : i+n]))
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendField appends a member's name and colon, after a comma unless it
// opens its object (the byte before it is '{').
func appendField(dst []byte, name string) []byte {
	if n := len(dst); n > 0 && dst[n-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendStringField appends "name":"value"; omitted when omitEmpty and
// value is "".
func appendStringField(dst []byte, name, value string, html, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return dst
	}
	return appendString(appendField(dst, name), value, html)
}

func appendBoolField(dst []byte, name string, v bool) []byte {
	return strconv.AppendBool(appendField(dst, name), v)
}

// appendFloat appends a float64 as encoding/json writes it.
func appendFloat(dst []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendStrings appends a JSON array of strings.
func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s, false)
	}
	return append(dst, ']')
}

// appendBase64 appends b as a JSON string of its standard base64.
func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
