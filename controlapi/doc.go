// Package controlapi holds the types of the control API, as control.json
// describes them and the Go API returns them: the faults of a scope and
// the rules that hold them, the journal's entries and the coverage report.
//
// The server fills these types itself, and the root package mediamock
// names them too (mediamock.FaultSpec is controlapi.FaultSpec), so a test
// decodes a control answer, or reads a Go call's result, into the one
// definition whose fields are documented here:
//
//	var faults controlapi.Faults
//	err := json.NewDecoder(resp.Body).Decode(&faults) // GET /_mock/faults
//
// It imports nothing of the project.
package controlapi
