package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection that writes a request already
// in wire form and reads its answer without building a Request or Response,
// as wrk does: the load generator shares the machine with the server it
// measures, so the less it spends per request the more the numbers say of
// the server.
type conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
}

// wireRequest renders one request, with a body when body is not empty.
func wireRequest(method, host, path, body string, headers ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nUser-Agent: mediamock-compare\r\n", method, path, host, token)
	for _, h := range headers { // "Name: value"
		b.WriteString(h + "\r\n")
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	return b.Bytes()
}

// do sends req and reads the whole answer, returning its status. A broken
// or closed connection is dialed again on the next call.
func (k *conn) do(req []byte) (int, error) {
	if k.c == nil {
		c, err := net.DialTimeout("tcp", k.addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		k.c, k.br = c, bufio.NewReaderSize(c, 64<<10)
	}
	status, keep, err := k.roundTrip(req)
	if err != nil || !keep {
		k.close()
	}
	return status, err
}

func (k *conn) close() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

var errAnswer = errors.New("malformed answer")

func (k *conn) roundTrip(req []byte) (status int, keep bool, err error) {
	if _, err = k.c.Write(req); err != nil {
		return 0, false, err
	}
	line, err := k.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, errAnswer
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, errAnswer
	}
	length, chunked, keep := -1, false, true
	for {
		line, err = k.br.ReadSlice('\n')
		if err != nil {
			return status, false, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		if !ok {
			return status, false, errAnswer
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqual(name, "Content-Length"):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return status, false, errAnswer
			}
		case asciiEqual(name, "Transfer-Encoding"):
			chunked = asciiEqual(value, "chunked")
		case asciiEqual(name, "Connection"):
			keep = !asciiEqual(value, "close")
		}
	}
	switch {
	case chunked:
		err = k.discardChunks()
	case length >= 0:
		_, err = k.br.Discard(length)
	default: // the body runs to the end of the connection
		_, err = io.Copy(io.Discard, k.br)
		keep = false
	}
	return status, keep && err == nil, err
}

func (k *conn) discardChunks() error {
	for {
		line, err := k.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(size), 16, 64)
		if err != nil {
			return errAnswer
		}
		if n == 0 { // trailers, then a blank line
			for {
				line, err = k.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if _, err = k.br.Discard(int(n) + 2); err != nil {
			return err
		}
	}
}

func asciiEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// load runs conc keep-alive connections for dur and returns requests per
// second, p50 and p99.
func load(url, method, path, body string, conc int, dur time.Duration, headers ...string) (float64, time.Duration, time.Duration) {
	addr := strings.TrimPrefix(url, "http://")
	deadline := time.Now().Add(dur)
	var mu sync.Mutex
	var all []time.Duration
	var bad atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		// Each connection has a JSON-RPC id of its own: ids of requests
		// in flight at once must differ (the MCP server refuses a duplicate in flight).
		req := wireRequest(method, addr, path, strings.Replace(body, `"id":1,`, fmt.Sprintf(`"id":%d,`, w+1), 1), headers...)
		go func() {
			defer wg.Done()
			k := &conn{addr: addr}
			defer k.close()
			local := make([]time.Duration, 0, 1<<16)
			for {
				t := time.Now()
				if !t.Before(deadline) {
					break
				}
				status, err := k.do(req)
				if err != nil || status >= 300 {
					bad.Add(1)
					continue
				}
				local = append(local, time.Since(t))
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "compare: %s %s: %d errors or non-2xx answers\n", method, path, n)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return 0, 0, 0
	}
	return float64(len(all)) / dur.Seconds(), all[len(all)/2], all[(len(all)-1)*99/100]
}
