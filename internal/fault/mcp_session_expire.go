package fault

// MCPSessionExpire ends the MCP session: its next request answers 404.
const MCPSessionExpire = "mcp_session_expire"

func init() { Register(MCPSessionExpire, new(mcpSessionExpire)) }

type mcpSessionExpire struct{}

func (*mcpSessionExpire) About() About {
	return About{Stage: Session, Strikes: []string{MCP}, Targets: []string{TargetProbability, TargetFirst},
		Doc:   "the MCP session ends; its request (and every later one) answers 404, and the client must initialize again.",
		Meets: "the session ends: this and every later request with its id answer 404; initialize again"}
}

// Targets is a request of a session.
func (*mcpSessionExpire) Targets(r Request) bool { return r.Session }

// Session ends the request's session.
func (*mcpSessionExpire) Session(r MCPRequest) { r.EndSession() }
