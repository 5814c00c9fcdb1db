package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxStdioLine caps one line of MCP over stdio, as MaxBodyBytes caps an
// HTTP request's body by default.
const MaxStdioLine = 16 << 20

// Stdio stands between a stdio peer and the SDK's newline-delimited
// transport, which ends the session at the first line it cannot read and
// stops reading at end of input without answering what it has read:
//
//   - every line is checked before the SDK sees it: one that is not JSON
//     (or nests deeper than the decoder allows) is answered with a parse
//     error (-32700), one that is JSON but not a JSON-RPC message (an
//     object id, a number id out of range, neither request nor response)
//     with an invalid request (-32600), one longer than MaxStdioLine with
//     an invalid request after its bytes are skipped; the session goes on.
//   - at end of input, the SDK's input ends only once every request read
//     has been answered (or cancelled by the peer), so that a script piped
//     in gets all its answers before the process exits.
//
// Reader is what the SDK reads, Writer what it writes: the peer's output,
// through which Stdio sees the answers go.
type Stdio struct {
	Reader io.ReadCloser
	Writer io.WriteCloser

	in      io.Reader
	pw      *io.PipeWriter
	out     io.Writer
	mu      sync.Mutex // guards out, pending, eof
	pending map[string]bool
	reads   map[string]bool // sessionless reads not yet answered (vetted.reads)
	eof     bool
	version string        // the revision the peer initialized with
	settled chan struct{} // closed at end of input once nothing is pending
}

// NewStdio starts reading in; Reader ends when in has ended and every
// request read from it has been answered, or when ctx ends.
func NewStdio(ctx context.Context, in io.Reader, out io.Writer) *Stdio {
	pr, pw := io.Pipe()
	s := &Stdio{Reader: pr, in: in, pw: pw, out: out, pending: map[string]bool{}, reads: map[string]bool{}, settled: make(chan struct{})}
	s.Writer = stdioWriter{s}
	go s.pump(ctx)
	return s
}

// pump reads the peer's lines, answers the bad ones and passes the others.
func (s *Stdio) pump(ctx context.Context) {
	br := bufio.NewReaderSize(s.in, 64<<10)
	var line []byte
	for {
		var err error
		line, err = readLine(br, line[:0])
		if errors.Is(err, errLineTooLong) {
			s.reply(jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: the line is longer than %d bytes, the most a message may be.", MaxStdioLine))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if s.check(msg) {
				if _, werr := s.pw.Write(append(msg, '\n')); werr != nil {
					return // the SDK has stopped reading
				}
			}
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			break
		}
	}
	s.mu.Lock()
	s.eof = true
	s.settle()
	s.mu.Unlock()
	select {
	case <-s.settled:
	case <-ctx.Done():
	}
	s.pw.Close()
}

var errLineTooLong = errors.New("line too long")

// readLine appends the next line of br to buf, without its newline; a
// line over MaxStdioLine is skipped to its end and reported as
// errLineTooLong. At end of input it returns what it read and io.EOF.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > MaxStdioLine+1 {
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case tooLong && (err == nil || errors.Is(err, io.EOF)):
			if err == nil {
				return buf, errLineTooLong
			}
			return buf, errors.Join(errLineTooLong, io.EOF)
		default:
			return bytes.TrimSuffix(buf, []byte("\n")), err
		}
	}
}

// check answers a line the SDK would choke on and reports whether the line
// may pass; a request that passes is pending until answered.
func (s *Stdio) check(line []byte) bool {
	v := vet(line)
	if v.code != 0 {
		s.reply(v.code, v.message)
		return false
	}
	if v.unknown != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.out.Write(append(v.unknown, '\n'))
		return false
	}
	s.mu.Lock()
	if v.version != "" {
		s.version = v.version
	}
	for _, id := range v.calls {
		s.pending[id] = true
	}
	for _, id := range v.reads {
		s.reads[id] = true
	}
	for _, id := range v.cancelled {
		delete(s.pending, id) // a cancelled request may go unanswered
	}
	s.mu.Unlock()
	return true
}

// vetted is what vet found in a line of stdio or the body of a POST.
type vetted struct {
	code    int64  // the JSON-RPC error to answer with: 0 if the SDK may read it
	message string // the error's message
	// calls are the ids of the requests it carries (idKey), cancelled
	// those of the requests a notifications/cancelled in it cancels.
	calls, cancelled []string
	// version is the protocol revision an initialize in it asks for.
	version string
	// reads are the ids of its sessionless resources/read requests, whose
	// results the SDK leaves without a resultType.
	reads []string
	// unknown is the answer to a single request of a revision the server
	// does not speak (its _meta's protocol version): -32022 with the ones
	// it does.
	unknown []byte
}

// vet checks one JSON-RPC message or batch as the SDK would read it, so
// that what the SDK would refuse without an answer (over stdio, by ending
// the session) gets the protocol's error instead: -32700 for what is not
// one JSON value (trailing data, nesting over the decoder's 10,000 levels),
// -32600 for JSON that is no JSON-RPC message (an empty batch, an id that
// is an object or a number out of range, a response with neither result
// nor error).
func vet(data []byte) vetted {
	if !json.Valid(data) {
		return vetted{code: jsonrpc.CodeParseError, message: "Parse error: the message is not one JSON value."}
	}
	data = bytes.TrimSpace(data)
	var raws []json.RawMessage
	if data[0] == '[' {
		if json.Unmarshal(data, &raws) != nil || len(raws) == 0 {
			return vetted{code: jsonrpc.CodeInvalidRequest, message: "Invalid request: an empty batch."}
		}
	} else {
		raws = []json.RawMessage{data}
	}
	var v vetted
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return vetted{code: jsonrpc.CodeInvalidRequest, message: "Invalid request: " + err.Error() + "."}
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			// A response carries a result or an error: {"id":2} alone is
			// neither request nor response.
			var probe struct{ Result, Error json.RawMessage }
			if json.Unmarshal(raw, &probe) != nil || (probe.Result == nil && probe.Error == nil) {
				return vetted{code: jsonrpc.CodeInvalidRequest, message: "Invalid request: a message with an id and no method is a response, and carries a result or an error."}
			}
			continue
		}
		if req.IsCall() {
			var p struct {
				Meta struct {
					ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
				} `json:"_meta"`
			}
			if bytes.Contains(req.Params, []byte(`"io.modelcontextprotocol/protocolVersion"`)) {
				_ = json.Unmarshal(req.Params, &p) // a message of the sessionless revision: its version
			}
			switch version := p.Meta.ProtocolVersion; {
			case version != "" && !knownVersion(version) && len(raws) == 1:
				id, _ := json.Marshal(req.ID.Raw())
				return vetted{unknown: errorMessage(id, versionError(version))}
			case version >= sessionlessVersion && req.Method == "resources/read":
				v.reads = append(v.reads, idKey(req.ID))
			}
			v.calls = append(v.calls, idKey(req.ID))
			if req.Method == "initialize" {
				var p struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				if json.Unmarshal(req.Params, &p) == nil {
					v.version = p.ProtocolVersion
				}
			}
		} else if req.Method == "notifications/cancelled" {
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					v.cancelled = append(v.cancelled, idKey(id))
				}
			}
		}
	}
	return v
}

// reply writes an error answer of the gate's own, with a null id: JSON-RPC
// answers so when the request's id cannot be known.
func (s *Stdio) reply(code int64, message string) {
	data := errorMessage(nil, &jsonrpc.Error{Code: code, Message: message})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Write(append(data, '\n'))
}

// errorMessage is a JSON-RPC error response; an id that is not a string
// or a number is null.
func errorMessage(id json.RawMessage, err *jsonrpc.Error) []byte {
	if !validID(id) {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, err})
	return data
}

// settle closes settled at end of input once nothing is pending.
// Requires s.mu.
func (s *Stdio) settle() {
	if s.eof && len(s.pending) == 0 {
		select {
		case <-s.settled:
		default:
			close(s.settled)
		}
	}
}

// stdioWriter passes the SDK's messages (one per Write) to the peer and
// marks the requests they answer.
type stdioWriter struct{ s *Stdio }

func (w stdioWriter) Write(p []byte) (int, error) {
	var answered []string
	trimmed := bytes.TrimSpace(p)
	var raws []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		_ = json.Unmarshal(trimmed, &raws)
	} else {
		raws = []json.RawMessage{trimmed}
	}
	for _, raw := range raws {
		// Only the id and method are read: a result may be large.
		var probe struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.Method == "" && len(probe.ID) > 0 {
			var v any
			if json.Unmarshal(probe.ID, &v) == nil {
				if id, err := jsonrpc.MakeID(v); err == nil {
					answered = append(answered, idKey(id))
				}
			}
		}
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	n := len(p)
	if w.s.version != "" && w.s.version < sessionlessVersion {
		p = stripCacheable(p)
	}
	if len(raws) == 1 && len(answered) == 1 && w.s.reads[answered[0]] {
		delete(w.s.reads, answered[0])
		p = completeResult(p)
	}
	_, err := w.s.out.Write(p)
	for _, id := range answered {
		delete(w.s.pending, id)
	}
	w.s.settle()
	return n, err
}

func (stdioWriter) Close() error { return nil }

// idKey is a request id as a map key: numbers and strings apart.
func idKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return strconv.Quote(v)
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}

// stripCacheable removes the ttlMs and cacheScope the SDK puts first in
// every result: they come with the sessionless revision, and no earlier
// one defines them. msg is one message as the SDK writes it (a JSON body,
// or a server-sent event around one); it is changed in place.
func stripCacheable(msg []byte) []byte {
	const key = `"result":{"ttlMs":`
	head := msg[:min(len(msg), 512)]
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return msg
	}
	start := i + len(`"result":{`)
	j := start + len(`"ttlMs":`)
	for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
		j++
	}
	const scope = `,"cacheScope":"`
	if !bytes.HasPrefix(msg[j:], []byte(scope)) {
		return msg
	}
	j += len(scope)
	end := bytes.IndexByte(msg[j:], '"')
	if end < 0 {
		return msg
	}
	j += end + 1
	if j < len(msg) && msg[j] == ',' {
		j++
	}
	return append(msg[:start], msg[j:]...)
}

// completeResult says a sessionless result is complete (resultType), when
// the SDK has not: it leaves a resources/read result without one. msg is
// one message as the SDK writes it; an error is left as it is.
func completeResult(msg []byte) []byte {
	const key = `"result":{`
	head := msg[:min(len(msg), 512)]
	i := bytes.Index(head, []byte(key))
	if i < 0 || bytes.Contains(head, []byte(`"resultType":`)) {
		return msg
	}
	i += len(key)
	out := make([]byte, 0, len(msg)+len(`"resultType":"complete",`))
	out = append(append(out, msg[:i]...), `"resultType":"complete",`...)
	return append(out, msg[i:]...)
}
