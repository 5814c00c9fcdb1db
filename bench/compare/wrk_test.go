package main

import (
	"testing"
	"time"
)

// TestParseWrk reads a report of wrk 4.1 as it prints one with --latency
// and its count of answers that are not 2xx.
func TestParseWrk(t *testing.T) {
	out := `Running 8s test @ http://127.0.0.1:8090/api/v1/assets?limit=20
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.25ms  812.00us  16.86ms   90.11%
    Req/Sec    25.01k     1.27k   29.02k    71.25%
  Latency Distribution
     50%    1.02ms
     75%    1.39ms
     90%    2.94ms
     99%  812.00us
  200080 requests in 8.05s, 1.72GB read
  Socket errors: connect 0, read 2, write 0, timeout 1
Requests/sec:  24854.33
Transfer/sec:    218.40MB
  Non-2xx or 3xx responses: 4
`
	r, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.rps != 24854.33 || r.p50 != 1020*time.Microsecond || r.p99 != 812*time.Microsecond || r.bad != 7 || r.requests != 200080 {
		t.Fatalf("%+v", r)
	}
	if n := r.served(8 * time.Second); n != 200080 {
		t.Fatal("served:", n)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Fatal("a report without figures must be an error")
	}
	if d := wrkDuration("1.02s"); d != 1020*time.Millisecond {
		t.Fatal(d)
	}
}
