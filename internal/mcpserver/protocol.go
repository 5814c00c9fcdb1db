package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
)

// The protocol revisions the server speaks, newest first.
const (
	// Sessionless is the first revision without sessions (SEP-2575):
	// every request names its revision in its _meta and, over HTTP, in
	// the Mcp-Protocol-Version, Mcp-Method and Mcp-Name headers.
	Sessionless = "2026-07-28"
	// the handshake era
	v20251125 = "2025-11-25"
	v20250618 = "2025-06-18"
	v20250326 = "2025-03-26"
	v20241105 = "2024-11-05"
)

// Versions are the protocol revisions the server speaks, newest first.
var Versions = []string{Sessionless, v20251125, v20250618, v20250326, v20241105}

// Speaks reports whether the server speaks a protocol revision.
func Speaks(version string) bool {
	for _, v := range Versions {
		if v == version {
			return true
		}
	}
	return false
}

// The keys of a sessionless request's and result's _meta.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// Implementation names a server to its clients (serverInfo).
type Implementation struct {
	Name    string
	Title   string
	Version string
}

func (i Implementation) append(dst []byte, html bool) []byte {
	dst = appendStringField(append(dst, '{'), "name", i.Name, html, false)
	dst = appendStringField(dst, "title", i.Title, html, true)
	dst = appendStringField(dst, "version", i.Version, html, false)
	return append(dst, '}')
}

// appendServerMeta appends the _meta member of a sessionless result: the
// server names itself in every one.
func appendServerMeta(dst []byte, impl Implementation, html bool) []byte {
	dst = append(appendField(dst, "_meta"), `{"`+MetaServerInfo+`":`...)
	return append(impl.append(dst, html), '}')
}

// Capabilities are what a server offers.
type Capabilities struct {
	Logging, Prompts, Resources, Tools bool
}

func (c Capabilities) append(dst []byte) []byte {
	dst = append(dst, '{')
	for _, f := range []struct {
		name string
		on   bool
	}{{"logging", c.Logging}, {"prompts", c.Prompts}, {"resources", c.Resources}, {"tools", c.Tools}} {
		if f.on {
			dst = append(appendField(dst, f.name), "{}"...)
		}
	}
	return append(dst, '}')
}

// A Tool is a tool as tools/list shows it.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the tool's arguments, an object
	// schema (written as encoding/json writes it: a map's keys sorted).
	InputSchema any
	Annotations *ToolAnnotations
}

// ToolAnnotations tell a client what a tool does to the world.
type ToolAnnotations struct {
	DestructiveHint *bool
	IdempotentHint  bool
	OpenWorldHint   *bool
	ReadOnlyHint    bool
	Title           string
}

// appendJSON appends v as encoding/json writes it without escaping HTML.
func appendJSON(dst []byte, v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...), nil
}

func (t *Tool) append(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	if a := t.Annotations; a != nil {
		dst = append(appendField(dst, "annotations"), '{')
		if a.DestructiveHint != nil {
			dst = appendBoolField(dst, "destructiveHint", *a.DestructiveHint)
		}
		dst = appendBoolField(dst, "idempotentHint", a.IdempotentHint)
		if a.OpenWorldHint != nil {
			dst = appendBoolField(dst, "openWorldHint", *a.OpenWorldHint)
		}
		dst = appendBoolField(dst, "readOnlyHint", a.ReadOnlyHint)
		dst = append(appendStringField(dst, "title", a.Title, false, true), '}')
	}
	dst = appendStringField(dst, "description", t.Description, false, true)
	var err error
	if dst, err = appendJSON(appendField(dst, "inputSchema"), t.InputSchema); err != nil {
		return nil, err
	}
	dst = appendStringField(dst, "name", t.Name, false, false)
	dst = appendStringField(dst, "title", t.Title, false, true)
	return append(dst, '}'), nil
}

// A Resource is a resource as resources/list shows it.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

func (r *Resource) append(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "description", r.Description, false, true)
	dst = appendStringField(dst, "mimeType", r.MIMEType, false, true)
	dst = appendStringField(dst, "name", r.Name, false, false)
	dst = appendStringField(dst, "title", r.Title, false, true)
	dst = appendStringField(dst, "uri", r.URI, false, false)
	return append(dst, '}')
}

// A ResourceTemplate is a family of resources, as
// resources/templates/list shows it: URITemplate is a prefix followed by
// one variable ("mediamock://assets/{id}").
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

func (r *ResourceTemplate) append(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "description", r.Description, false, true)
	dst = appendStringField(dst, "mimeType", r.MIMEType, false, true)
	dst = appendStringField(dst, "name", r.Name, false, false)
	dst = appendStringField(dst, "title", r.Title, false, true)
	dst = appendStringField(dst, "uriTemplate", r.URITemplate, false, false)
	return append(dst, '}')
}

// A Prompt is a prompt as prompts/list shows it.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
}

// A PromptArgument is an argument a prompt takes.
type PromptArgument struct {
	Name        string
	Title       string
	Description string
	Required    bool
}

func (p *Prompt) append(dst []byte) []byte {
	dst = append(dst, '{')
	if len(p.Arguments) > 0 {
		dst = append(appendField(dst, "arguments"), '[')
		for i, a := range p.Arguments {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendStringField(append(dst, '{'), "name", a.Name, false, false)
			dst = appendStringField(dst, "title", a.Title, false, true)
			dst = appendStringField(dst, "description", a.Description, false, true)
			if a.Required {
				dst = appendBoolField(dst, "required", true)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = appendStringField(dst, "description", p.Description, false, true)
	dst = appendStringField(dst, "name", p.Name, false, false)
	dst = appendStringField(dst, "title", p.Title, false, true)
	return append(dst, '}')
}

// Content is a part of a tool's result or of a prompt's message: a text,
// or a link to a resource.
type Content struct {
	// Type is "text" or "resource_link".
	Type string
	Text string
	// A link's resource.
	URI, Name, Title, MIMEType string
}

// Text is a text content.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// appendContent appends content as json.Marshal writes it (HTML escaped).
func (c *Content) append(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "type", c.Type, true, false)
	if c.Type == "text" {
		dst = appendStringField(dst, "text", c.Text, true, false)
		return append(dst, '}')
	}
	dst = appendStringField(dst, "text", c.Text, true, true)
	dst = appendStringField(dst, "mimeType", c.MIMEType, true, true)
	dst = appendStringField(dst, "uri", c.URI, true, true)
	dst = appendStringField(dst, "name", c.Name, true, true)
	dst = appendStringField(dst, "title", c.Title, true, true)
	return append(dst, '}')
}

// A ToolResult is what a tool call answers: its content and, for a
// client that reads it, the same as JSON (StructuredContent, an object);
// IsError marks a tool error (the call was made, and failed).
type ToolResult struct {
	Content []Content
	// StructuredContent is written as it is: a JSON object, compact.
	StructuredContent []byte
	IsError           bool
	// Release, when set, is called once the answer is built: the
	// structured content's buffer may then be given back.
	Release func()
}

func (r *ToolResult) append(dst []byte, sessionless bool, impl Implementation) []byte {
	dst = append(dst, '{')
	if sessionless {
		dst = appendServerMeta(dst, impl, true)
	}
	dst = append(appendField(dst, "content"), '[')
	for i := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.Content[i].append(dst)
	}
	dst = append(dst, ']')
	if len(r.StructuredContent) > 0 {
		dst = append(appendField(dst, "structuredContent"), r.StructuredContent...)
	}
	if r.IsError {
		dst = appendBoolField(dst, "isError", true)
	}
	if sessionless {
		dst = appendStringField(dst, "resultType", "complete", true, false)
	}
	return append(dst, '}')
}

// A ReadResult is what a resource read answers.
type ReadResult struct {
	Contents []ResourceContents
	// CacheScope is the sessionless revision's cacheScope of the result:
	// "public" (the default) for what is the same for every caller,
	// "private" for what is the caller's own.
	CacheScope string
}

// ResourceContents are a resource's contents: a text, or a blob (base64
// on the wire). A blob may be read as it is written: BlobReader, of
// BlobSize bytes.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
	// BlobReader, when set, is read into the blob as the answer is
	// written: the file is never held whole.
	BlobReader io.Reader
	BlobSize   int64
}

// append appends a read result; when a content streams (BlobReader), up to its first content's blob
// (the opening quote included) when that content streams, else whole:
// tail is what follows the blob.
func (r *ReadResult) append(dst []byte, sessionless bool, impl Implementation) (head []byte, tail []byte) {
	dst = append(dst, '{')
	if sessionless {
		dst = appendServerMeta(dst, impl, true)
		dst = append(appendField(dst, "ttlMs"), '0')
		scope := r.CacheScope
		if scope == "" {
			scope = "public"
		}
		dst = appendStringField(dst, "cacheScope", scope, true, false)
	}
	dst = append(appendField(dst, "contents"), '[')
	for i := range r.Contents {
		c := &r.Contents[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStringField(append(dst, '{'), "uri", c.URI, true, false)
		dst = appendStringField(dst, "mimeType", c.MIMEType, true, true)
		dst = appendStringField(dst, "text", c.Text, true, true)
		if c.BlobReader != nil {
			dst = append(appendField(dst, "blob"), '"')
			tail = append(tail, `"}`...)
			tail = r.appendEnd(tail, i+1, sessionless)
			return dst, tail
		}
		if len(c.Blob) > 0 {
			dst = appendBase64(appendField(dst, "blob"), c.Blob)
		}
		dst = append(dst, '}')
	}
	return r.appendEnd(dst, len(r.Contents), sessionless), nil
}

// appendEnd appends the contents after the from'th, and the result's end.
func (r *ReadResult) appendEnd(dst []byte, from int, sessionless bool) []byte {
	for _, c := range r.Contents[from:] {
		dst = append(dst, ',')
		dst = appendStringField(append(dst, '{'), "uri", c.URI, true, false)
		dst = appendStringField(dst, "mimeType", c.MIMEType, true, true)
		dst = appendStringField(dst, "text", c.Text, true, true)
		if len(c.Blob) > 0 {
			dst = appendBase64(appendField(dst, "blob"), c.Blob)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if sessionless {
		dst = appendStringField(dst, "resultType", "complete", true, false)
	}
	return append(dst, '}')
}

// A PromptResult is what prompts/get answers.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
}

// A PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string
	Content Content
}

func (r *PromptResult) append(dst []byte, sessionless bool, impl Implementation) []byte {
	dst = append(dst, '{')
	if sessionless {
		dst = appendServerMeta(dst, impl, true)
	}
	dst = appendStringField(dst, "description", r.Description, true, true)
	dst = append(appendField(dst, "messages"), '[')
	for i := range r.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.Messages[i].Content.append(appendField(append(dst, '{'), "content"))
		dst = append(appendStringField(dst, "role", r.Messages[i].Role, true, false), '}')
	}
	dst = append(dst, ']')
	if sessionless {
		dst = appendStringField(dst, "resultType", "complete", true, false)
	}
	return append(dst, '}')
}
