package edge

import "testing"

func TestTraceparent(t *testing.T) {
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"well-formed", good, good},
		{"flags not sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
		{"a later version keeps its first part", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"empty", "", ""},
		{"upper-case hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", ""},
		{"version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},
		{"version 00 with more", good + "-x", ""},
		{"trace id zeros", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"parent id zeros", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},
		{"short trace id", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", ""},
		{"wrong separator", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},
		{"not hex", "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", ""},
		{"later version glued", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Traceparent(tc.in); got != tc.want {
				t.Errorf("Traceparent(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
