package mcpserver

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// params are a request's params, as the methods the server serves read
// them: each method takes some of these fields.
type params struct {
	meta       jsontext.Value // _meta, an object; nil when absent or null
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

// decodeParams reads a request's params for its method; a value of another
// type than the method's is refused as the official SDK words it.
func decodeParams(m *Message, p *params) *Error {
	spec := methodParams[m.Method]
	fail := func(inner string) *Error {
		if spec.plain {
			return &Error{Message: fmt.Sprintf("handling '%s': unmarshaling %q into a *%s: %s", m.Method, []byte(m.Params), spec.typ, inner)}
		}
		return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("handling '%s': invalid params: unmarshaling %q into a *%s: %s", m.Method, []byte(m.Params), spec.typ, inner)}
	}
	if m.Params == nil || m.Params.Kind() == 'n' {
		if !spec.optional {
			if spec.plain {
				return &Error{Message: fmt.Sprintf("handling '%s': missing required \"params\"", m.Method)}
			}
			return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("handling '%s': invalid request: missing required \"params\"", m.Method)}
		}
		return nil
	}
	if m.Params.Kind() != '{' {
		return fail(typeMismatch(m.Params, "", spec.typ))
	}
	var bad *Error
	members(m.Params, func(name string, v jsontext.Value) {
		if bad != nil {
			return
		}
		if name == "_meta" {
			switch v.Kind() {
			case '{':
				p.meta = v
			case 'n':
				p.meta = nil
			default:
				bad = fail(typeMismatchOf(v, name, spec.typ, "mcp.Meta"))
			}
			return
		}
		kind, ok := spec.fields[name]
		if !ok {
			return
		}
		if v.Kind() != 'n' && kind != 0 && v.Kind() != kind && !(kind == 'm' && v.Kind() == '{') {
			typ := "string"
			switch {
			case kind == 'm':
				typ = "map[string]string"
			case name == "level":
				typ = "mcp.LoggingLevel"
			case name == "capabilities":
				typ = "mcp.clientCapabilitiesV2"
			case name == "clientInfo":
				typ = "mcp.Implementation"
			}
			bad = fail(typeMismatchOf(v, name, spec.typ, typ))
			return
		}
		switch name {
		case "name":
			p.name = unquoted(v)
		case "arguments":
			if kind == 'm' {
				if v.Kind() == '{' {
					p.promptArgs = map[string]string{}
					members(v, func(k string, a jsontext.Value) {
						if bad == nil && a.Kind() != '"' && a.Kind() != 'n' {
							bad = fail(typeMismatchOf(a, name, spec.typ, "map[string]string"))
						}
						p.promptArgs[k] = unquoted(a)
					})
				}
				return
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
	})
	return bad
}

// meta is what a request's _meta says of the sessionless revision.
type meta struct {
	version      string // the revision the request follows: "" for the handshake era's
	capabilities bool   // clientCapabilities: an object
	clientInfo   jsontext.Value
	logLevel     string
	progress     jsontext.Value // progressToken; nil when absent or null
}

// readMeta reads a request's _meta; params that are not an object have
// none.
func readMeta(raw jsontext.Value) meta {
	var mt meta
	if raw.Kind() != '{' {
		return mt
	}
	members(raw, func(name string, v jsontext.Value) {
		if name != "_meta" {
			return
		}
		mt = meta{}
		members(v, func(key string, v jsontext.Value) {
			switch key {
			case MetaProtocolVersion:
				mt.version = unquoted(v)
			case MetaClientCapabilities:
				mt.capabilities = v.Kind() == '{'
			case MetaClientInfo:
				mt.clientInfo = v
			case MetaLogLevel:
				mt.logLevel = unquoted(v)
			case "progressToken":
				if v.Kind() != 'n' {
					mt.progress = v
				}
			}
		})
	})
	return mt
}
