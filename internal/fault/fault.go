// Package fault describes the faults a client may ask for below a
// well-formed answer, and decides which request meets which: a connection
// reset, an empty reply, a body cut short or trickling, garbage, a latency
// drawn from a distribution, a forced status, an expired or broken file
// download, a lost MCP session, a dropped MCP stream, an MCP server that is
// briefly unavailable; and, above a well-formed answer, the service's
// next additive release (evolve: unknown fields, enum values and headers,
// keys in another order); and, in the simulation, the fates of jobs and
// deliveries.
//
// Each kind is one file of this package: the struct of its parameters, what
// it says of itself (About) and the method its stage calls, registered by
// name (Register). The registry is the one source of the rest: validation,
// the Mock-Fault header, control.json's FaultSpec (and the dashboard's form
// built from it), the reference page of the kinds, the coverage's failure
// paths and controlapi.FaultSpec, which go generate ./... writes from it.
//
// A fault is asked for as a Spec (controlapi.FaultSpec): once for one
// request (the Mock-Fault header) or as a Rule (controlapi.FaultRule) kept
// in a scope (the control API). Whether a rule's
// n-th matching request meets it is a function of the server's seed, the
// rule's place in its scope and n alone, so the same seed and the same
// requests meet the same faults, whatever else the server serves.
package fault

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/fixtures"
)

// Path classes: what a request is for.
const (
	API   = "api"   // the service's REST operations
	Files = "files" // the files behind the URLs
	MCP   = "mcp"   // the MCP endpoint
)

// Classes are the path classes.
var Classes = []string{API, Files, MCP}

// Modalities are the modalities a fault may target; a kind of jobs may
// target Encore creations too (JobModalities).
var Modalities = []string{"image", "video", "audio", "3d"}

// JobModalities are the lanes of jobs: a generation's modality, or
// "encore" for Encore creations.
var JobModalities = append(slices.Clone(Modalities), "encore")

// Platforms are the social platforms a kind of deliveries may name, or
// "all": every one.
var Platforms = append(slices.Clone(fixtures.Platforms), "all")

// MaxFirst bounds a rule's first.
const MaxFirst = 1_000_000

// Targeting fields: whom a rule strikes and how often.
const (
	TargetClass       = "class"
	TargetOperation   = "operation"
	TargetModality    = "modality"
	TargetProbability = "probability"
	TargetFirst       = "first"
)

// Targets are the targeting fields, in the order the documents list them.
var Targets = []string{TargetClass, TargetOperation, TargetModality, TargetProbability, TargetFirst}

// Spec is a fault as a client asks for it: a kind, whom it targets, how
// often it strikes and the kind's parameters, flat (controlapi.FaultSpec,
// which go generate ./... writes from the registry). It is the control
// API's own type; a kind reads its parameters in its own struct, decoded
// from the spec.
type Spec = controlapi.FaultSpec

// Request is what a decision knows of a request.
type Request struct {
	// Workspace is whose rules apply, when the front knows better than
	// the edge (0: the edge's).
	Workspace uint64
	Class     string
	Operation string
	Modality  string
	// Ranged is a file request with a Range header.
	Ranged bool
	// Session is an MCP request that carries a session id.
	Session bool
	// Path is the request's path.
	Path string
}

// ModalityOf is the modality of a file's media type.
func ModalityOf(mime string) string {
	switch kind, _, _ := strings.Cut(mime, "/"); kind {
	case "image", "video", "audio":
		return kind
	case "model":
		return "3d"
	}
	return ""
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func listOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}

// ruleID names the n-th rule of the server.
func ruleID(n uint64) string { return "flt_" + strconv.FormatUint(n, 10) }
