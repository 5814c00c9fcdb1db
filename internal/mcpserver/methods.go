package mcpserver

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// The methods' answers: a tool call, a resource read, a prompt, the
// lists (made once and kept), the answers written into pooled buffers.

// handle runs an admitted message's method.
func (s *Server) handle(c *call) (*reply, *Error) {
	m := c.msg
	impl := *s.opts.Implementation
	result := func(b []byte) *reply {
		return &reply{msg: append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), m.ID.String()...), `,"result":`...), b...), '}')}
	}
	switch m.Method {
	case "initialize":
		c.peer.mu.Lock()
		again := c.peer.initialized
		c.peer.initialized = true
		c.peer.mu.Unlock()
		if again {
			return nil, &Error{Message: `duplicate "initialize" received`}
		}
		version := c.msg.p.version
		if !Speaks(version) || version >= Sessionless {
			version = v20251125
		}
		c.peer.mu.Lock()
		c.peer.version = version
		c.peer.mu.Unlock()
		b := appendField([]byte("{"), "capabilities")
		b = s.opts.Capabilities.append(b)
		b = appendStringField(b, "instructions", s.opts.Instructions, false, true)
		b = appendStringField(b, "protocolVersion", version, false, false)
		b = append(impl.append(appendField(b, "serverInfo"), false), '}')
		return result(b), nil
	case "ping", "logging/setLevel":
		if m.Method == "logging/setLevel" {
			c.peer.mu.Lock()
			c.peer.logLevel = c.msg.p.level
			c.peer.mu.Unlock()
		}
		return result([]byte("{}")), nil
	case "notifications/cancelled":
		if id, err := readID(c.msg.p.requestID); err == nil && id.IsValid() {
			c.peer.cancel(id)
		}
		return nil, nil
	case "notifications/initialized", "notifications/roots/list_changed", "notifications/progress":
		return nil, nil
	case "server/discover":
		b := s.listHead(c.sessionless, impl)
		b = appendStrings(appendField(b, "supportedVersions"), Versions)
		b = s.opts.Capabilities.append(appendField(b, "capabilities"))
		b = appendStringField(b, "instructions", s.opts.Instructions, false, true)
		return result(append(b, '}')), nil
	case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
		if c.msg.p.cursor != "" {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params"}
		}
		return result(s.list(m.Method, c.sessionless, impl)), nil
	case "tools/call":
		t := s.tools[c.msg.p.name]
		if t == nil {
			return nil, Errorf(CodeInvalidParams, "unknown tool %q", c.msg.p.name)
		}
		tc := &c.tool
		*tc = ToolCall{Name: t.def.Name, Arguments: c.msg.p.arguments, drop: c.drop}
		if token := c.msg.meta.progress; token != nil && c.notify != nil {
			tc.Progress = func(progress, total float64, message string) {
				c.notify(progressMessage(token, progress, total, message))
			}
		}
		res := t.handler(c.ctx, tc)
		buf := answerBuffer(len(res.StructuredContent) + 512)
		b := append(append(append(*buf, `{"jsonrpc":"2.0","id":`...), m.ID.String()...), `,"result":`...)
		b = append(res.append(b, c.sessionless, impl), '}')
		if res.Release != nil {
			res.Release() // the answer holds a copy of its structured content
		}
		c.reply = reply{msg: b, buf: buf}
		return &c.reply, nil
	case "resources/read":
		return s.read(c, impl)
	case "prompts/get":
		i := slices.IndexFunc(s.prompts, func(p *prompt) bool { return p.def.Name == c.msg.p.name })
		if i < 0 {
			return nil, Errorf(CodeInvalidParams, "unknown prompt %q", c.msg.p.name)
		}
		res, err := s.prompts[i].handler(c.ctx, c.msg.p.promptArgs)
		if err != nil {
			return nil, asError(err)
		}
		return result(res.append(nil, c.sessionless, impl)), nil
	case "completion/complete":
		if !c.msg.p.ref {
			return nil, Errorf(CodeInvalidParams, "invalid params: missing required 'ref' field")
		}
	}
	return nil, methodNotFound(m.Method)
}

// read serves resources/read.
func (s *Server) read(c *call, impl Implementation) (*reply, *Error) {
	uri := c.msg.p.uri
	h, mime, _, ok := s.lookupResource(uri)
	if !ok {
		return nil, ResourceNotFound(uri)
	}
	res, err := h(c.ctx, uri)
	if err != nil {
		return nil, asError(err)
	}
	if res == nil || res.Contents == nil {
		return nil, &Error{Message: fmt.Sprintf("reading resource %s: read handler returned nil information", uri)}
	}
	for i := range res.Contents {
		rc := &res.Contents[i]
		rc.URI = cmp.Or(rc.URI, uri)
		rc.MIMEType = cmp.Or(rc.MIMEType, mime)
		if rc.BlobReader != nil && !c.streams {
			// Where the answer cannot stream (a batch, an event), the
			// blob is read whole.
			data := make([]byte, rc.BlobSize)
			if _, err := io.ReadFull(rc.BlobReader, data); err != nil {
				return nil, &Error{Message: err.Error()}
			}
			rc.Blob, rc.BlobReader = data, nil
		}
	}
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), c.msg.ID.String()...), `,"result":`...)
	head, tail := res.append(head, c.sessionless, impl)
	r := &reply{msg: head}
	for _, rc := range res.Contents {
		if rc.BlobReader != nil {
			r.blob, r.size = rc.BlobReader, rc.BlobSize
			r.tail = append(tail, '}')
			return r, nil
		}
	}
	r.msg = append(head, '}')
	return r, nil
}

// asError is the JSON-RPC error of a handler's error.
func asError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Message: err.Error()}
}

// progressMessage is a progress notification.
func progressMessage(token jsontext.Value, progress, total float64, message string) []byte {
	b := make([]byte, 0, 128+len(message))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, token...)
	if message != "" {
		b = appendString(append(b, `,"message":`...), message, false)
	}
	b = appendFloat(append(b, `,"progress":`...), progress)
	if total != 0 {
		b = appendFloat(append(b, `,"total":`...), total)
	}
	return append(b, "}}"...)
}

// versionData is the data of -32022: the versions the server speaks and
// the one asked for.
func versionData(supported []string, requested string) []byte {
	b := appendStrings([]byte(`{"supported":`), supported)
	b = appendString(append(b, `,"requested":`...), requested, false)
	return append(b, '}')
}

// listHead opens a list's result: in the sessionless revision, its
// resultType, the server's name and the cache hints (the lists are the
// same for every caller).
func (s *Server) listHead(sessionless bool, impl Implementation) []byte {
	b := []byte("{")
	if sessionless {
		b = appendStringField(b, "resultType", "complete", false, false)
		b = appendServerMeta(b, impl, false)
		b = append(appendField(b, "ttlMs"), '0')
		b = appendStringField(b, "cacheScope", "public", false, false)
	}
	return b
}

type listKey struct {
	method      string
	sessionless bool
	impl        Implementation
}

// list is a list's result, made once for each revision.
func (s *Server) list(method string, sessionless bool, impl Implementation) []byte {
	key := listKey{method, sessionless, impl}
	if b, ok := s.lists.Load(key); ok {
		return b.([]byte)
	}
	b := s.listHead(sessionless, impl)
	switch method {
	case "tools/list":
		b = append(appendField(b, "tools"), '[')
		for i, t := range s.toolList {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, t.json...)
		}
	case "resources/list":
		b = append(appendField(b, "resources"), '[')
		for i, r := range s.resources {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.def.append(b)
		}
	case "resources/templates/list":
		b = append(appendField(b, "resourceTemplates"), '[')
		for i, t := range s.templates {
			if i > 0 {
				b = append(b, ',')
			}
			b = t.def.append(b)
		}
	case "prompts/list":
		b = append(appendField(b, "prompts"), '[')
		for i, p := range s.prompts {
			if i > 0 {
				b = append(b, ',')
			}
			b = p.def.append(b)
		}
	}
	b = append(b, "]}"...)
	s.lists.Store(key, b)
	return b
}

// answerBuffers are the buffers tool results are built in: an answer is
// about the size of the operation's body, and is copied when written.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

func answerBuffer(size int) *[]byte {
	b := answerBuffers.Get().(*[]byte)
	if cap(*b) < size {
		*b = make([]byte, 0, max(size, 1024))
	}
	*b = (*b)[:0]
	return b
}

func putAnswerBuffer(b *[]byte) {
	if cap(*b) <= 1<<20 {
		answerBuffers.Put(b)
	}
}
