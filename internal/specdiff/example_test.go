package specdiff_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/mediamock/mediamock/internal/specdiff"
	"github.com/mediamock/mediamock/spec"
)

// A revision where listModels' track parameter became required, and a
// journal of a client that called listModels without it.
func ExampleDiff() {
	theirs := bytes.Replace(spec.OpenAPI, []byte(`"name": "track",`), []byte(`"name": "track", "required": true,`), 1)
	traffic := &specdiff.Traffic{}
	err := traffic.ReadJournal([]byte(`{"entries":[{"method":"GET","path":"/api/v1/models","query":"modality=image","operation":"listModels","status":200}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	report, err := specdiff.Diff(specdiff.Options{Base: spec.OpenAPI, BaseName: "openapi.json", Revision: theirs, RevisionName: "theirs.json", Traffic: traffic})
	if err != nil {
		fmt.Println(err)
		return
	}
	report.WriteText(os.Stdout)
	// Output:
	// openapi.json against theirs.json: 1 change (1 breaking, 0 warning, 0 info); traffic (journal): 1 call of 1 operation, 1 change used (1 breaking)
	// RANK  SEVERITY  USED     CALLS  OPERATION                 CHANGE                             MESSAGE
	// 1     breaking  yes 1/1  1      GET /models (listModels)  request-parameter-became-required  the `query` request parameter `track` became required [used: without query parameter track]
}
