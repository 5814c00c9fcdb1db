package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxStdioLine caps one line of MCP over stdio, as a request's body is
// capped over HTTP.
const MaxStdioLine = 16 << 20

// ServeStdio serves one MCP session over in and out: newline-delimited
// JSON-RPC, until in ends and every request read has been answered, or
// ctx ends. Every line is answered and the session goes on: a line that
// is not JSON (-32700), not a JSON-RPC message, a batch where the
// revision has none, or too long (-32600) gets its error with a null id;
// a request of a revision the server does not speak gets -32022; a
// request of a method it does not serve, -32601.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	p := &stdioPeer{s: s, out: out}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	var readErr error
	for ctx.Err() == nil {
		var err error
		line, err = readLine(br, line[:0])
		switch {
		case errors.Is(err, errLineTooLong):
			p.reply(ID{}, &Error{Code: CodeInvalidRequest, html: true, Message: fmt.Sprintf("Invalid request: the line is longer than %d bytes, the most a message may be.", MaxStdioLine)})
		default:
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				// The line's values share its bytes while its requests
				// run: each line has a buffer of its own.
				p.line(ctx, bytes.Clone(msg))
			}
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	p.calls.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return readErr
}

type stdioPeer struct {
	s     *Server
	peer  peer
	mu    sync.Mutex // guards out
	out   io.Writer
	calls sync.WaitGroup
}

// write writes a message as a line.
func (p *stdioPeer) write(msg []byte) {
	line := make([]byte, len(msg)+1)
	copy(line, msg)
	line[len(msg)] = '\n'
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Write(line)
}

func (p *stdioPeer) reply(id ID, e *Error) { p.write(appendError(nil, id, e)) }

// line serves one line: its notifications in order, its requests at once.
func (p *stdioPeer) line(ctx context.Context, data []byte) {
	b, err := decodeBody(data, overStdio)
	if err != nil {
		err.html = true
		p.reply(ID{}, err)
		return
	}
	if m := b.single(); m != nil && m.IsCall() {
		if v := m.meta.version; v != "" && !Speaks(v) {
			p.reply(m.ID, versionError(v))
			return
		}
	}
	if b.batch {
		p.peer.mu.Lock()
		version := p.peer.version
		p.peer.mu.Unlock()
		for _, m := range b.msgs {
			if v := m.meta.version; v >= Sessionless {
				version = v // the sessionless revision has no batches either
			}
		}
		if version >= v20250618 {
			p.reply(ID{}, &Error{Code: CodeInvalidRequest, html: true,
				Message: fmt.Sprintf("Invalid request: JSON-RPC batching is not supported in %s and later (request version: %s).", v20250618, version)})
			return
		}
		seen := map[string]bool{}
		for _, m := range b.msgs {
			if m.IsCall() {
				if seen[m.ID.raw] {
					p.reply(ID{}, &Error{Code: CodeInvalidRequest, html: true, Message: fmt.Sprintf("Invalid request: duplicate message ID %s.", m.ID)})
					return
				}
				seen[m.ID.raw] = true
			}
		}
	}
	var batch *batchAnswers
	if b.batch {
		batch = newBatchAnswers(p, b.msgs)
	}
	for i := range b.msgs {
		m := &b.msgs[i]
		if !m.request {
			continue // a response: the server sends no requests
		}
		if !m.IsCall() {
			p.s.serve(&call{ctx: ctx, msg: m, peer: &p.peer})
			continue
		}
		slot := batch.slot()
		if p.inflight(m.ID) {
			e := appendError(nil, ID{}, Errorf(CodeInvalidRequest, "invalid request: request ID %s already in use", m.ID))
			if batch != nil {
				batch.set(slot, e)
			} else {
				p.write(e)
			}
			continue
		}
		c := &call{msg: m, peer: &p.peer, notify: p.write}
		c.start(ctx)
		c.drop = func() bool { return false }
		answer := func(rep *reply) {
			if batch != nil {
				batch.set(slot, rep.msg)
			} else {
				p.write(rep.msg)
			}
			rep.done()
		}
		if err := p.s.admit(c); err != nil {
			c.finish()
			answer(c.refused(err))
			continue
		}
		if c.sync() {
			answer(p.s.run(c))
			c.finish()
			continue
		}
		p.calls.Add(1)
		go func() {
			defer p.calls.Done()
			defer c.finish()
			answer(p.s.run(c))
		}()
	}
}

func (p *stdioPeer) inflight(id ID) bool {
	p.peer.mu.Lock()
	defer p.peer.mu.Unlock()
	_, ok := p.peer.inflight[id.raw]
	return ok
}

// batchAnswers collect the answers of a batch's requests, written as one
// array, in the batch's order, once all are in. Every request has its
// place before the first runs: an answer that comes at once (a ping) does
// not end the batch before the others are asked.
type batchAnswers struct {
	p       *stdioPeer
	mu      sync.Mutex
	answers [][]byte
	missing int
	next    int // the place of the next request, as the line is served
}

func newBatchAnswers(p *stdioPeer, msgs []Message) *batchAnswers {
	n := 0
	for i := range msgs {
		if msgs[i].request && msgs[i].IsCall() {
			n++
		}
	}
	return &batchAnswers{p: p, answers: make([][]byte, n), missing: n}
}

// slot is the place of the next request of the batch (0 for none).
func (b *batchAnswers) slot() int {
	if b == nil {
		return 0
	}
	b.next++
	return b.next - 1
}

func (b *batchAnswers) set(i int, msg []byte) {
	b.mu.Lock()
	b.answers[i] = bytes.Clone(msg)
	b.missing--
	done := b.missing == 0
	b.mu.Unlock()
	if done {
		// Written as encoding/json writes an array of messages: <, > and &
		// escaped.
		raw := make([]json.RawMessage, len(b.answers))
		for i, a := range b.answers {
			raw[i] = a
		}
		line, err := json.Marshal(raw)
		if err != nil {
			line = append(append([]byte("["), bytes.Join(b.answers, []byte(","))...), ']')
		}
		b.p.write(line)
	}
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
