package mediamock

import (
	"bytes"
	"net/http"
	"time"

	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/wire"
)

// CAPath is where a server with a certificate of its own making serves its
// local certificate authority (PEM), for clients to trust: curl --cacert,
// NODE_EXTRA_CA_CERTS, an SSL context's cafile.
const CAPath = ControlPath + "/tls/ca.pem"

// serveCA serves the authority a client trusts.
func (s *Server) serveCA(w *front.Writer, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		front.WriteError(w, wire.MethodNotAllowed(r.Method, "the certificate authority", "GET, HEAD", []string{"GET", "HEAD"}))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="mediamock-ca.pem"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.tls.CAPEM))
}

// CAFile is the file of the local certificate authority a server made for
// --tls (beside its state file), "" when it serves a given certificate or
// plain http.
func (s *Server) CAFile() string {
	if s.tls == nil {
		return ""
	}
	return s.tls.CAPath
}

// CACertificate is the PEM certificate a client trusts to reach the server
// over https (the local authority, or the given chain's last certificate);
// nil for plain http.
func (s *Server) CACertificate() []byte {
	if s.tls == nil {
		return nil
	}
	return bytes.Clone(s.tls.CAPEM)
}
