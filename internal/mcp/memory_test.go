package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// bigUpload uploads a PNG of about size bytes with the business key and
// returns its asset id.
func bigUpload(t testing.TB, srv *mediamock.Server, size int) int64 {
	t.Helper()
	form, ctype := testkit.UploadForm(t, size)
	req, err := http.NewRequest("POST", srv.BaseURL()+"/uploads", bytes.NewReader(form))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyBusiness)
	req.Header.Set("Content-Type", ctype)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%.300s", body)
	var asset struct{ ID int64 }
	require.NoError(t, json.Unmarshal(body, &asset))
	return asset.ID
}

// session opens a session at a revision with the business key and returns
// its headers for the next requests.
func session(t testing.TB, srv *mediamock.Server, version string) http.Header {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + mediamock.KeyBusiness}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}}
	init := strings.Replace(initialize, "2025-11-25", version, 1)
	resp, _ := post(t, srv, h, init)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	h.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	h.Set("Mcp-Protocol-Version", version)
	post(t, srv, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// post sends a message and returns the answer's status, its body's
// length and, when keep, the body.
func post(t testing.TB, srv *mediamock.Server, h http.Header, body string, keep ...bool) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(body))
	require.NoError(t, err)
	req.Header = h.Clone()
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if len(keep) > 0 && keep[0] {
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, data
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.ContentLength = n
	return resp, nil
}

func readMessage(id int, asset int64) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"mediamock://assets/%d"}}`, id, asset)
}

// TestResourceReadsStayBounded reads a 10 MiB upload as a resource in a
// batch of 50 (2025-03-26, the revision with batches) and 32 times at once
// in one session, and bounds the heap while they run and after. Through
// the Go MCP SDK a read held about seven times the file (3.5 GB for the
// batch, 2.2 GB for the 32): a single read streams, and a batch reads at
// most 16 MiB.
func TestResourceReadsStayBounded(t *testing.T) {
	const size = 10 << 20
	srv := mediamock.RunT(t, mediamock.WithLogger(nil))
	asset := bigUpload(t, srv, size)

	before := testkit.HeapInUse()
	h := session(t, srv, "2025-03-26")
	var batch []string
	for i := range 50 {
		batch = append(batch, readMessage(i+2, asset))
	}
	var answer []byte
	peak := testkit.PeakHeap(func() { _, answer = post(t, srv, h, "["+strings.Join(batch, ",")+"]", true) })
	t.Logf("batch of 50: %d MB answered; heap before %d MB, peak %d MB", len(answer)>>20, before>>20, peak>>20)
	assert.Less(t, int64(peak)-int64(before), int64(256<<20), "heap during a batch of 50 reads (3.5 GB when each read went whole through the Go MCP SDK)")
	// Events of the answer (server-sent): one read, 49 refusals.
	assert.Equal(t, 1, strings.Count(string(answer), `"blob":"`))
	assert.Equal(t, 49, strings.Count(string(answer), `"code":"response_too_large"`))
	answer = nil

	hs := session(t, srv, "2025-11-25")
	var wg sync.WaitGroup
	before = testkit.HeapInUse() // the batch's garbage collected
	peak = testkit.PeakHeap(func() {
		for i := range 32 {
			wg.Go(func() {
				// The client reads the answer as it comes, not to count
				// its own copies in the heap: the head, then the blob.
				req, err := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(readMessage(i+2, asset)))
				require.NoError(t, err)
				req.Header = hs.Clone()
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				br := bufio.NewReader(resp.Body)
				head, err := br.ReadString('"')
				for err == nil && !strings.HasSuffix(head, `"blob":"`) {
					var more string
					more, err = br.ReadString('"')
					head += more
				}
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"contents":[{"uri":"mediamock://assets/%d","mimeType":"image/png","blob":"`, i+2, asset), head)
				blob, _ := io.Copy(io.Discard, br)
				assert.EqualValues(t, base64.StdEncoding.EncodedLen(size)+len(`"}]}}`), blob)
			})
		}
		wg.Wait()
	})
	after := testkit.HeapInUse()
	t.Logf("32 concurrent reads: heap peak %d MB, after %d MB", peak>>20, after>>20)
	assert.Less(t, int64(peak)-int64(before), int64(40<<20), "heap during 32 concurrent reads")
	assert.Less(t, int64(after)-int64(before), int64(24<<20), "heap retained after the reads")
}
