package mcpserver

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// params are a request's params, as the methods the server serves read
// them: each method takes some of these fields. A message's params are
// read once, when the message is (readParams).
type params struct {
	name       string         // tools/call, prompts/get
	arguments  jsontext.Value // tools/call: as sent
	promptArgs map[string]string
	uri        string // resources/read
	cursor     string // the lists
	level      string // logging/setLevel
	version    string // initialize: protocolVersion
	requestID  jsontext.Value
	ref        bool // completion/complete: a ref was given
}

// meta is what a request's _meta says: of the sessionless revision, and
// its progress token.
type meta struct {
	version      string        // the revision the request follows: "" for the handshake era's
	capabilities bool          // clientCapabilities: an object
	clientInfo   jsontext.Kind // of clientInfo: 0 when absent
	logLevel     string
	progress     jsontext.Value // progressToken; nil when absent or null
}

// paramsOf describes the params of a method: the name of the official
// SDK's type of them (its errors name it, and clients have seen them), the
// fields the method reads with their JSON kinds ('"' a string, '{' an
// object, 'm' an object of strings, 0 anything), and whether they may be
// absent.
type paramsOf struct {
	typ      string
	fields   map[string]jsontext.Kind
	optional bool
	// plain errors are not invalid params (code 0): initialize's.
	plain bool
}

var methodParams = map[string]paramsOf{
	"initialize":                       {typ: "mcp.initializeParamsV2", fields: map[string]jsontext.Kind{"protocolVersion": '"', "capabilities": '{', "clientInfo": '{'}, plain: true},
	"ping":                             {typ: "mcp.PingParams", optional: true},
	"server/discover":                  {typ: "mcp.DiscoverParams", optional: true},
	"tools/list":                       {typ: "mcp.ListToolsParams", fields: map[string]jsontext.Kind{"cursor": '"'}, optional: true},
	"tools/call":                       {typ: "mcp.CallToolParamsRaw", fields: map[string]jsontext.Kind{"name": '"', "arguments": 0}},
	"resources/list":                   {typ: "mcp.ListResourcesParams", fields: map[string]jsontext.Kind{"cursor": '"'}, optional: true},
	"resources/templates/list":         {typ: "mcp.ListResourceTemplatesParams", fields: map[string]jsontext.Kind{"cursor": '"'}, optional: true},
	"resources/read":                   {typ: "mcp.ReadResourceParams", fields: map[string]jsontext.Kind{"uri": '"'}},
	"resources/subscribe":              {typ: "mcp.SubscribeParams", fields: map[string]jsontext.Kind{"uri": '"'}},
	"resources/unsubscribe":            {typ: "mcp.UnsubscribeParams", fields: map[string]jsontext.Kind{"uri": '"'}},
	"prompts/list":                     {typ: "mcp.ListPromptsParams", fields: map[string]jsontext.Kind{"cursor": '"'}, optional: true},
	"prompts/get":                      {typ: "mcp.GetPromptParams", fields: map[string]jsontext.Kind{"name": '"', "arguments": 'm'}},
	"logging/setLevel":                 {typ: "mcp.SetLoggingLevelParams", fields: map[string]jsontext.Kind{"level": '"'}},
	"completion/complete":              {typ: "mcp.CompleteParams", fields: map[string]jsontext.Kind{"ref": 0}},
	"subscriptions/listen":             {typ: "mcp.SubscriptionsListenParams"},
	"notifications/initialized":        {typ: "mcp.InitializedParams", optional: true},
	"notifications/cancelled":          {typ: "mcp.CancelledParams", fields: map[string]jsontext.Kind{"requestId": 0, "reason": '"'}, optional: true},
	"notifications/roots/list_changed": {typ: "mcp.RootsListChangedParams", optional: true},
	"notifications/progress":           {typ: "mcp.ProgressNotificationParams", fields: map[string]jsontext.Kind{"progressToken": 0}},
}

// isNotification reports whether a method is one of the notifications the
// server takes.
func isNotification(method string) bool {
	switch method {
	case "notifications/initialized", "notifications/cancelled", "notifications/roots/list_changed", "notifications/progress":
		return true
	}
	return false
}

// checkRequest holds a message to its method as the official SDK does
// before serving it: a method the server serves, an id for a request and
// none for a notification, params unless they may be absent.
func checkRequest(m *Message) *Error {
	spec, ok := methodParams[m.Method]
	if !ok {
		return &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("JSON RPC not handled: %q unsupported", m.Method)}
	}
	if isNotification(m.Method) && m.ID.IsValid() {
		return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: unexpected id for %q", m.Method)}
	}
	if !isNotification(m.Method) && !m.ID.IsValid() {
		return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: missing id for %q", m.Method)}
	}
	if !spec.optional && m.Params == nil {
		return &Error{Code: CodeInvalidRequest, Message: `invalid request: missing required "params"`}
	}
	return nil
}

// readParams reads a request's params once, for everything that asks of
// them: the method's fields (and, when one is of another type than the
// method takes, the error the official SDK words), the _meta, whether a
// member is of another type than the protocol's (odd).
func (m *Message) readParams() {
	if m.Params.Kind() != '{' {
		m.readParamsFrom(nil, nil)
		return
	}
	d := getDecoder(m.Params)
	defer d.release()
	m.readParamsFrom(d.dec, m.Params)
}

// paramsFail is the error of params the method cannot take, as the SDK
// words it: inner says what is wrong.
func (m *Message) paramsFail(spec paramsOf, inner string) *Error {
	if spec.plain {
		return &Error{Message: fmt.Sprintf("handling '%s': unmarshaling %q into a *%s: %s", m.Method, []byte(m.Params), spec.typ, inner)}
	}
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("handling '%s': invalid params: unmarshaling %q into a *%s: %s", m.Method, []byte(m.Params), spec.typ, inner)}
}

// readParamsFrom reads the params from dec, which stands at their '{' and
// reads data (nil when they are not an object: m.Params says what they
// are). A syntax error is returned (the message is no JSON: nothing else
// counts).
func (m *Message) readParamsFrom(dec *jsontext.Decoder, data []byte) error {
	m.p, m.meta, m.paramsErr, m.odd = params{}, meta{}, nil, false
	spec, known := methodParams[m.Method]
	if dec == nil {
		switch {
		case m.Params == nil || m.Params.Kind() == 'n':
			if known && !spec.optional {
				if spec.plain {
					m.paramsErr = &Error{Message: fmt.Sprintf("handling '%s': missing required \"params\"", m.Method)}
				} else {
					m.paramsErr = &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("handling '%s': invalid request: missing required \"params\"", m.Method)}
				}
			}
		default:
			m.odd = true
			if known {
				m.paramsErr = m.paramsFail(spec, typeMismatch(m.Params, "", spec.typ))
			}
		}
		return nil
	}
	p := &m.p
	oddKind := func(v jsontext.Kind, want jsontext.Kind) {
		if v != 'n' && v != want {
			m.odd = true
		}
	}
	var mismatch func() *Error // the first member of another type than the method takes
	return eachMember(dec, func(name []byte) error {
		key := paramName(name)
		if key == "" {
			return dec.SkipValue() // a member no method reads
		}
		if key == "_meta" {
			kind := dec.PeekKind()
			oddKind(kind, '{')
			switch kind {
			case '{':
				return readMetaFrom(dec, &m.meta, &m.odd)
			case 'n':
				m.meta = meta{}
			default:
				v, err := dec.ReadValue()
				if err != nil {
					return err
				}
				if mismatch == nil && known {
					v := v.Clone()
					mismatch = func() *Error { return m.paramsFail(spec, typeMismatchOf(v, "_meta", spec.typ, "mcp.Meta")) }
				}
				return nil
			}
			return dec.SkipValue()
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		switch key {
		case "name", "uri":
			oddKind(v.Kind(), '"')
		case "arguments":
			oddKind(v.Kind(), '{')
		}
		kind, ok := spec.fields[key]
		if !ok {
			return nil
		}
		if v.Kind() != 'n' && kind != 0 && v.Kind() != kind && !(kind == 'm' && v.Kind() == '{') {
			if mismatch == nil {
				typ := "string"
				switch {
				case kind == 'm':
					typ = "map[string]string"
				case key == "level":
					typ = "mcp.LoggingLevel"
				case key == "capabilities":
					typ = "mcp.clientCapabilitiesV2"
				case key == "clientInfo":
					typ = "mcp.Implementation"
				}
				v := v.Clone()
				mismatch = func() *Error { return m.paramsFail(spec, typeMismatchOf(v, key, spec.typ, typ)) }
			}
			return nil
		}
		switch key {
		case "name":
			p.name = unquoted(v)
		case "arguments":
			if kind == 'm' {
				if v.Kind() == '{' {
					p.promptArgs = map[string]string{}
					members(v, func(k []byte, a jsontext.Value) {
						if mismatch == nil && a.Kind() != '"' && a.Kind() != 'n' {
							a := a.Clone()
							mismatch = func() *Error {
								return m.paramsFail(spec, typeMismatchOf(a, "arguments", spec.typ, "map[string]string"))
							}
						}
						p.promptArgs[string(k)] = unquoted(a)
					})
				}
				return nil
			}
			p.arguments = v
		case "uri":
			p.uri = unquoted(v)
		case "cursor":
			p.cursor = unquoted(v)
		case "level":
			p.level = unquoted(v)
		case "protocolVersion":
			p.version = unquoted(v)
		case "requestId":
			p.requestID = v
		case "ref":
			p.ref = v.Kind() != 'n'
		}
		return nil
	}, func() {
		if mismatch != nil {
			m.paramsErr = mismatch()
		}
	})
}

// eachMember reads the object dec stands at: member reads each member's
// value from dec, given its name (valid only during the call); done runs
// once the object is read whole.
func eachMember(dec *jsontext.Decoder, member func(name []byte) error, done func()) error {
	if _, err := dec.ReadToken(); err != nil { // {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := member(nameBytes(name)); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return err
	}
	if done != nil {
		done()
	}
	return nil
}

// paramName is the name of a member of params that a method reads, as a
// constant (a name is compared without a copy); "" for any other.
func paramName(name []byte) string {
	switch string(name) {
	case "_meta":
		return "_meta"
	case "name":
		return "name"
	case "arguments":
		return "arguments"
	case "uri":
		return "uri"
	case "cursor":
		return "cursor"
	case "level":
		return "level"
	case "protocolVersion":
		return "protocolVersion"
	case "capabilities":
		return "capabilities"
	case "clientInfo":
		return "clientInfo"
	case "requestId":
		return "requestId"
	case "reason":
		return "reason"
	case "ref":
		return "ref"
	case "progressToken":
		return "progressToken"
	}
	return ""
}

// readMetaFrom reads the _meta object dec stands at into mt; odd is set
// when a member the protocol types is of another type.
func readMetaFrom(dec *jsontext.Decoder, mt *meta, odd *bool) error {
	*mt = meta{}
	return eachMember(dec, func(name []byte) error {
		switch string(name) {
		case MetaClientInfo:
			mt.clientInfo = dec.PeekKind()
			switch mt.clientInfo {
			case 'n':
				return dec.SkipValue()
			case '{':
			default:
				*odd = true
				return dec.SkipValue()
			}
			return eachMember(dec, func(name []byte) error {
				if s := string(name); s == "name" || s == "version" {
					if k := dec.PeekKind(); k != '"' && k != 'n' {
						*odd = true
					}
				}
				return dec.SkipValue()
			}, nil)
		case MetaClientCapabilities:
			mt.capabilities = dec.PeekKind() == '{'
			return dec.SkipValue()
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		switch string(name) {
		case MetaProtocolVersion:
			if v.Kind() != '"' && v.Kind() != 'n' {
				*odd = true
			}
			mt.version = internVersion(v)
		case MetaLogLevel:
			mt.logLevel = unquoted(v)
		case "progressToken":
			mt.progress = nil
			if v.Kind() != 'n' {
				mt.progress = v
			}
		}
		return nil
	}, nil)
}

// internVersion is a revision's name, without a copy for the ones the
// server speaks.
func internVersion(v jsontext.Value) string {
	if len(v) > 2 && v[0] == '"' {
		inner := v[1 : len(v)-1]
		for _, version := range Versions {
			if string(inner) == version {
				return version
			}
		}
	}
	return unquoted(v)
}
