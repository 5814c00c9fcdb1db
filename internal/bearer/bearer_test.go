package bearer

import "testing"

func TestToken(t *testing.T) {
	tests := []struct {
		header, token string
		ok            bool
	}{
		{"Bearer mk_test_all_scopes", "mk_test_all_scopes", true},
		{"bearer mk_test_all_scopes", "mk_test_all_scopes", true},
		{"BEARER mk_test_all_scopes", "mk_test_all_scopes", true},
		{"bEaReR sbc_1", "sbc_1", true},
		{"Bearer   spaced  ", "spaced", true},
		{"  Bearer t", "t", true},
		{"Bearer a b", "a b", true},
		{"Bearer ", "", true},
		{"Bearer", "", false},
		{"Bearertoken", "", false},
		{"Bearer\ttab", "", false},
		{"Basic dXNlcjpwYXNz", "", false},
		{"Token mk_test_all_scopes", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		token, ok := Token(tt.header)
		if token != tt.token || ok != tt.ok {
			t.Errorf("Token(%q) = %q, %v; want %q, %v", tt.header, token, ok, tt.token, tt.ok)
		}
	}
}
