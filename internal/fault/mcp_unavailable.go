package fault

import (
	"fmt"
	"strconv"

	"github.com/mediamock/mediamock/internal/problem"
)

// MCPUnavailable answers 503 with Retry-After at the MCP endpoint.
const MCPUnavailable = "mcp_unavailable"

func init() { Register(MCPUnavailable, new(mcpUnavailable)) }

type mcpUnavailable struct {
	RetryAfterSeconds *int64 `json:"retry_after_seconds,omitempty"`
}

func (k *mcpUnavailable) Params() []*Param {
	return []*Param{Field(&k.RetryAfterSeconds, "Retry-After seconds", "the Retry-After; 1 when absent.").Min(0).Max(3600).Default(1)}
}

func (*mcpUnavailable) About() About {
	return About{Stage: Session, Strikes: []string{MCP}, Targets: []string{TargetProbability, TargetFirst},
		Doc:   "the MCP endpoint answers 503 `service_unavailable` with `Retry-After`.",
		Meets: "the MCP endpoint answers 503 with `Retry-After`"}
}

// Session refuses the request: 503, with Retry-After.
func (k *mcpUnavailable) Session(r MCPRequest) {
	secs := int64(1)
	if k.RetryAfterSeconds != nil {
		secs = *k.RetryAfterSeconds
	}
	r.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	r.Refuse(&problem.Error{Kind: problem.EUNAVAILABLE, Code: "service_unavailable",
		Message: fmt.Sprintf("The MCP server is temporarily unavailable; retry in %d seconds (an injected fault).", secs)})
}
