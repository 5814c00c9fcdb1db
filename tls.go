package mediamock

import "bytes"

// CAPath is where a server with a certificate of its own making serves its
// local certificate authority (PEM), for clients to trust: curl --cacert,
// NODE_EXTRA_CA_CERTS, an SSL context's cafile.
const CAPath = ControlPath + "/tls/ca.pem"

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
