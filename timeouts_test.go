package mediamock_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// Idle keep-alive connections are closed after the idle timeout.
func TestIdleConnectionsAreClosed(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.IdleTimeout = 50 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /_mock/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection before the 5 s deadline")
}

// A body that trickles in is cut off at the read timeout.
func TestTricklingBodiesAreCutOff(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ReadTimeout = 100 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/v1/generations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+
		mediamock.KeyAllScopes+"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn) // an answer, then the close; or the close alone
	assert.NoError(t, err, "the server ended the connection before the 5 s deadline")
}
