package testkit_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

func TestAwaitWakesAtEachNotify(t *testing.T) {
	var s testkit.Signal
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
			s.Notify()
		}
	}()
	testkit.Await(t, &s, "three changes", func() bool { return n.Load() == 3 })
}

func TestReceive(t *testing.T) {
	ch := make(chan int, 1)
	go func() { ch <- 7 }()
	assert.Equal(t, 7, testkit.Receive(t, ch, "the value"))
}

// A request recorded by the journal wakes a watcher of the server.
func TestWatchWakesOnTheJournal(t *testing.T) {
	srv := mediamock.RunT(t)
	w := testkit.Watch(t, srv)
	status, account, _ := testkit.REST(t, srv, mediamock.KeyReadOnly, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "account", account["object"])
	testkit.Await(t, w, "the request journaled", func() bool {
		return len(srv.Journal(mediamock.JournalFilter{Operation: "getAccount"})) == 1
	})
}

func TestSendAndErrorCode(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, body := testkit.Send(t, srv, "GET", "/_mock/clock", "evil.example", nil, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "forbidden_host", testkit.ErrorCode(t, body))
	resp, _ = testkit.Send(t, srv, "GET", "/", "", nil, "")
	assert.Equal(t, http.StatusFound, resp.StatusCode, "redirects are not followed")
	status, body := testkit.Control(t, srv, "GET", "/clock", "")
	assert.Equal(t, http.StatusOK, status, body)
}

func TestBearer(t *testing.T) {
	var got atomic.Value
	upstream := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer upstream.Close()
	client := &http.Client{Transport: testkit.Bearer{Key: "mk_test_x", Base: http.DefaultTransport}}
	req, err := http.NewRequest("GET", upstream.URL, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "Bearer mk_test_x", got.Load())
	assert.Empty(t, req.Header.Get("Authorization"), "the caller's request is left alone")
}

func TestPoll(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	testkit.Poll(t, "three increments", func() bool { return n.Load() == 3 })
}

// The helpers reach a server by its address as well as in process, and
// the key API sends is the root's.
func TestRemoteServer(t *testing.T) {
	assert.Equal(t, mediamock.KeyAllScopes, testkit.KeyAllScopes)
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "127.0.0.1:0" })
	remote := testkit.Remote(srv.URL() + "/")
	assert.Equal(t, srv.URL(), remote.URL())
	assert.Equal(t, srv.BaseURL(), remote.BaseURL())
	account := testkit.API(t, remote, "GET", "/account", nil)
	assert.NotZero(t, account["workspace_id"])
	code, body := testkit.Control(t, remote, "GET", "/workspaces/1", "")
	assert.Equal(t, http.StatusOK, code, body)
	assert.NotEmpty(t, testkit.Tokens(t, remote, 1))
}
