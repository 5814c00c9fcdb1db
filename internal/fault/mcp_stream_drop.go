package fault

// MCPStreamDrop closes a tool call's event stream before its result.
const MCPStreamDrop = "mcp_stream_drop"

func init() { Register(MCPStreamDrop, new(mcpStreamDrop)) }

type mcpStreamDrop struct{}

func (*mcpStreamDrop) About() About {
	return About{Stage: Call, Strikes: []string{MCP}, Targets: []string{TargetOperation, TargetModality, TargetProbability, TargetFirst},
		Doc: "a tool call's event stream closes before its result, after the call ran; the client resumes it with `Last-Event-ID` (protocol revisions with sessions), " +
			"or reports the call failed (the sessionless revision).",
		Meets: "a tool call's event stream closes before its result; with sessions the client resumes with `Last-Event-ID` and reads it, " +
			"without (revision 2026-07-28) the call fails"}
}

// Call drops the call's stream.
func (*mcpStreamDrop) Call(c MCPCall) { c.DropStream() }
