package oauth

import (
	"net/http"
	"slices"

	"github.com/mediamock/mediamock/internal/edge"
)

// revoke is token revocation (RFC 7009): an access or refresh token of the
// client ends; revoking a refresh token (live or rotated out) ends its
// whole family, access tokens included. The answer is 200 whether or not
// the token was known. form is the error of reading its form (readForm).
func (s *Server) revoke(w *edge.Writer, r *http.Request, form error) {
	if form != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The body must be a form: "+form.Error()+".")
		return
	}
	if !once(w, r) {
		return
	}
	c, ok := s.authenticateClient(w, r)
	if !ok {
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "token is required.")
		return
	}
	var ended []string
	s.mu.Lock()
	if f := s.refresh[tok]; f != nil && f.clientID == c.ID {
		ended = s.drop(f)
	} else if f := s.spent[tok]; f != nil && f.clientID == c.ID {
		ended = s.drop(f)
	} else if f := s.access[tok]; f != nil && f.clientID == c.ID {
		f.access = slices.DeleteFunc(f.access, func(t string) bool { return t == tok })
		delete(s.access, tok)
		ended = []string{tok}
	}
	s.mu.Unlock()
	if err := s.revokeAll(ended); err != nil {
		edge.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
