package parking_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/parking"
	"github.com/mediamock/mediamock/internal/testkit"
)

// parkingServer serves, through a parking listener, a handler that parks
// GET /wait (its answer is written when release is closed) and answers
// any other path at once.
func parkingServer(t *testing.T, release <-chan struct{}) (*parking.Listener, string, http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{}
	l := parking.New(ln, srv)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Handler", "yes")
		if r.URL.Path == "/wait" && l.Parkable(w, r) {
			if c, ok := l.Detach(w, r, r.Context()); ok {
				go func() {
					<-release
					c.Writer().Write([]byte("waited"))
					c.Finish(false)
				}()
				return
			}
		}
		w.Write([]byte("at once"))
	})
	srv.Handler = h
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String(), h
}

func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// A parked request's connection leaves net/http and comes back once it is
// answered: the answer is written as net/http writes one, and the request
// the client sent meanwhile is served on the same connection.
func TestParkedConnectionComesBack(t *testing.T) {
	release := make(chan struct{})
	l, addr, _ := parkingServer(t, release)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(testkit.Bound))
	_, err = io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	testkit.Poll(t, "the request parked", func() bool { return l.Parked() == 1 })
	_, err = io.WriteString(c, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n") // pipelined
	require.NoError(t, err)
	close(release)
	br := bufio.NewReader(c)
	resp, body := readAnswer(t, br)
	assert.Equal(t, "waited", body)
	assert.Equal(t, "yes", resp.Header.Get("X-Handler"), "the headers set before it parked are the answer's")
	assert.Equal(t, int64(len("waited")), resp.ContentLength)
	assert.False(t, resp.Close)
	resp, body = readAnswer(t, br)
	assert.Equal(t, "at once", body, "the next request is served on the connection given back")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	require.NoError(t, l.Wait(ctx))
	assert.Equal(t, 0, l.Parked())
}

// A request another server serves, or one over HTTP/2 or TLS, cannot be
// parked: it waits where it is (the plain fallback).
func TestNotParkable(t *testing.T) {
	release := make(chan struct{})
	close(release)
	l, _, h := parkingServer(t, release)
	other := httptest.NewServer(h)
	defer other.Close()
	resp, err := http.Get(other.URL + "/wait")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "at once", string(body), "another server's request is not parked")
	assert.Equal(t, 0, l.Parked())
	r := httptest.NewRequest("GET", "/wait", nil)
	r.ProtoMajor, r.ProtoMinor = 2, 0
	assert.False(t, l.Parkable(httptest.NewRecorder(), r))
}
