package edge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// MemoryTransport serves requests in memory, with no listener.
type MemoryTransport struct{ Handler http.Handler }

// RoundTrip serves r with the handler.
func (t MemoryTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := &memResponse{header: http.Header{}}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r = r.Clone(r.Context())
	if r.RequestURI == "" {
		r.RequestURI = r.URL.RequestURI()
	}
	if r.RemoteAddr == "" {
		r.RemoteAddr = "127.0.0.1:1"
	}
	t.Handler.ServeHTTP(rec, r)
	if rec.broken {
		return rec.brokenResponse(r)
	}
	return rec.response(r), nil
}

// memResponse is a ResponseWriter in memory.
type memResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	// broken: a fault broke the exchange, resetting the connection or
	// closing it; sent is what reached the client before it did.
	broken, reset bool
	sent          []byte
}

func (m *memResponse) Header() http.Header { return m.header }

func (m *memResponse) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}

func (m *memResponse) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(b)
}

func (m *memResponse) response(r *http.Request) *http.Response {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	// A client reads header names in canonical form, as net/http parses
	// them off the wire (the server writes some as the spec spells them).
	header := make(http.Header, len(m.header))
	for k, v := range m.header {
		ck := http.CanonicalHeaderKey(k)
		header[ck] = append(header[ck], v...)
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", m.status, http.StatusText(m.status)), StatusCode: m.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(bytes.NewReader(m.body.Bytes())),
		ContentLength: int64(m.body.Len()), Request: r,
	}
}

// Send and Break make the in-memory transport's answer a Breaker: a broken
// exchange is the error a client over TCP meets.
func (m *memResponse) Send(raw []byte)  { m.sent = append(m.sent, raw...) }
func (m *memResponse) Break(reset bool) { m.broken, m.reset = true, reset }

func (m *memResponse) brokenResponse(r *http.Request) (*http.Response, error) {
	switch {
	case m.reset && len(m.sent) == 0:
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscallReset}
	case len(m.sent) == 0:
		return nil, io.EOF
	case !bytes.HasPrefix(m.sent, []byte("HTTP/")):
		return nil, fmt.Errorf("net/http: malformed HTTP response %q", truncate(string(m.sent), 40))
	}
	// A head was sent, then part of the body: the body ends early.
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(m.sent)), r)
	if err != nil {
		return nil, err
	}
	end := error(io.ErrUnexpectedEOF)
	if m.reset {
		end = &net.OpError{Op: "read", Net: "tcp", Err: syscallReset}
	}
	resp.Body = &brokenBody{r: resp.Body, err: end}
	return resp, nil
}

// brokenBody reads what was sent, then fails as a broken connection does.
type brokenBody struct {
	r   io.ReadCloser
	err error
}

func (b *brokenBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, b.err
	}
	return n, err
}

func (b *brokenBody) Close() error { return b.r.Close() }
