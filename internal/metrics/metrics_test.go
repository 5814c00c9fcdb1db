package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCountIsBoundedAndFree(t *testing.T) {
	m := New([]string{"listAssets", "createGeneration"}, Sources{HeaderKinds: []string{"status"}})
	r := m.Requests
	r.Count("rest", "listAssets", 200, false)
	r.Count("rest", "listAssets", 200, false)
	r.Count("rest", "someoneElsesOperation", 404, false)
	r.Count("rest", "", 404, false)
	r.Count("gopher", "", 999, false)
	r.Count("rest", "listAssets", 429, false)
	r.Count("mcp", "createGeneration", 429, true)
	r.HeaderFault("status")
	r.HeaderFault("no_such_kind")

	const want = `
# HELP mediamock_requests_total Requests answered, by front, operation (operationId; none, or other for one outside the documents) and status. For an MCP tool call, the status the operation answered.
# TYPE mediamock_requests_total counter
mediamock_requests_total{front="mcp",operation="createGeneration",status="429"} 1
mediamock_requests_total{front="other",operation="none",status="0"} 1
mediamock_requests_total{front="rest",operation="listAssets",status="200"} 2
mediamock_requests_total{front="rest",operation="listAssets",status="429"} 1
mediamock_requests_total{front="rest",operation="none",status="404"} 1
mediamock_requests_total{front="rest",operation="other",status="404"} 1
# HELP mediamock_too_many_requests_total Requests answered 429, by front and cause: rate_limit (the workspace's rate window) or fault (forced by an injected fault).
# TYPE mediamock_too_many_requests_total counter
mediamock_too_many_requests_total{cause="fault",front="mcp"} 1
mediamock_too_many_requests_total{cause="rate_limit",front="rest"} 1
# HELP mediamock_fault_hits_total Injected faults that struck, by kind and by what injected them: a rule (of any scope) or a Mock-Fault header.
# TYPE mediamock_fault_hits_total counter
mediamock_fault_hits_total{kind="other",via="header"} 1
mediamock_fault_hits_total{kind="status",via="header"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"mediamock_requests_total", "mediamock_too_many_requests_total", "mediamock_fault_hits_total"); err != nil {
		t.Fatal(err)
	}

	if n := testing.AllocsPerRun(100, func() { r.Count("rest", "listAssets", 200, false) }); n != 0 {
		t.Errorf("Count allocates %v times a request once its label set was seen", n)
	}
	var none *Metrics
	none.Count("rest", "listAssets", 200, false) // a nil *Metrics counts nothing
	none.HeaderFault("status")
}

func BenchmarkCount(b *testing.B) {
	r := New([]string{"listAssets"}, Sources{}).Requests
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Count("rest", "listAssets", 200, false)
		}
	})
}
