package edge

// traceparentLen is the length of a version 00 traceparent header:
// version, trace id, parent id and flags, in lower-case hex, joined by
// dashes.
const traceparentLen = 2 + 1 + 32 + 1 + 16 + 1 + 2

// Traceparent is v when it is a well-formed W3C traceparent header (Trace
// Context, level 1): 00-<trace-id>-<parent-id>-<flags>, lower-case hex,
// neither id all zeros. A later version than 00 may carry more after its
// flags, behind a dash: its first part is kept, as the recommendation
// says a reader of version 00 does. Anything else is "".
func Traceparent(v string) string {
	if len(v) < traceparentLen {
		return ""
	}
	if v[:2] == "00" && len(v) != traceparentLen {
		return ""
	}
	if len(v) > traceparentLen && v[traceparentLen] != '-' {
		return ""
	}
	v = v[:traceparentLen]
	if v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return ""
	}
	version, trace, parent, flags := v[:2], v[3:35], v[36:52], v[53:]
	if !lowerHex(version) || version == "ff" || !lowerHex(trace) || !lowerHex(parent) || !lowerHex(flags) {
		return ""
	}
	if allZeros(trace) || allZeros(parent) {
		return ""
	}
	return v
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
