package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrkRun is one load by wrk, the independent generator: one thread, the
// same connections and duration as the program's own.
type wrkRun struct {
	rps      float64
	p50, p99 time.Duration
	bad      int64 // non-2xx answers and socket errors
	// requests counts the answers of the load (wrk's "N requests in"; the
	// 2xx answers of the program's own generator).
	requests int64
	// genCPU and serverCPU are the CPU time per request of the load
	// generator and of the server: on two shared cores, what one spends
	// the other cannot.
	genCPU, serverCPU time.Duration
	// cpuLo and cpuHi are the least and the most server CPU per request
	// of the rounds a median was taken of (medianRun).
	cpuLo, cpuHi time.Duration
}

// wrkPath is wrk's executable, "" when it is not installed.
var wrkPath, _ = exec.LookPath("wrk")

// wrkLoad loads url+path with wrk. Headers go on wrk's command line; a
// body goes through a Lua script that only sets it (wrk then builds the
// request once, as without a script); a JSON-RPC body gets a fresh id per
// request (an MCP server refuses a second request in flight with the same
// id), the one load that needs a function of the script for each request.
// Answers that are not 2xx are wrk's own count ("Non-2xx or 3xx
// responses"), not a Lua callback's: a callback on every answer costs the
// generator CPU that the server, on two shared cores, then does not get,
// and the faster the server the more it weighs.
func wrkLoad(dir, url, method, path, body string, conc int, dur time.Duration, headers ...string) (wrkRun, error) {
	var r wrkRun
	if wrkPath == "" {
		return r, fmt.Errorf("wrk is not installed")
	}
	args := []string{"-t1", "-c" + strconv.Itoa(conc), "-d" + strconv.Itoa(int(dur.Seconds())) + "s", "--latency",
		"-H", "Authorization: Bearer " + token}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	if method != "GET" || body != "" {
		var lua strings.Builder
		fmt.Fprintf(&lua, "wrk.method = %q\n", method)
		if body != "" {
			lua.WriteString("wrk.headers[\"Content-Type\"] = \"application/json\"\n")
		}
		if strings.Contains(body, `"id":1,`) {
			before, after, _ := strings.Cut(body, `"id":1,`)
			fmt.Fprintf(&lua, "local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format(nil, nil, nil, %q .. '\"id\":' .. n .. ',' .. %q)\nend\n", before, after)
		} else if body != "" {
			fmt.Fprintf(&lua, "wrk.body = %q\n", body)
		}
		script := filepath.Join(dir, "wrk.lua")
		if err := os.WriteFile(script, []byte(lua.String()), 0o600); err != nil {
			return r, err
		}
		args = append(args, "-s", script)
	}
	cmd := exec.Command(wrkPath, append(args, url+path)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return r, fmt.Errorf("wrk: %v: %s", err, lastLine(out))
	}
	r, err = parseWrk(string(out))
	if n := r.served(dur); err == nil && n > 0 {
		r.genCPU = time.Duration(float64(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()) / n)
	}
	return r, err
}

// served is how many requests the load served: wrk's count, or its rate
// times the duration when it printed none.
func (r wrkRun) served(dur time.Duration) float64 {
	if r.requests > 0 {
		return float64(r.requests)
	}
	return r.rps * dur.Seconds()
}

// parseWrk reads wrk's report: requests per second, the latency
// distribution's 50% and 99%, socket errors and its count of answers that
// are not 2xx.
func parseWrk(out string) (wrkRun, error) {
	var r wrkRun
	var got int
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			r.rps, _ = strconv.ParseFloat(f[1], 64)
			got++
		case len(f) == 2 && f[0] == "50%":
			r.p50 = wrkDuration(f[1])
			got++
		case len(f) == 2 && f[0] == "99%":
			r.p99 = wrkDuration(f[1])
			got++
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			r.requests, _ = strconv.ParseInt(f[0], 10, 64)
		case len(f) == 5 && f[0] == "Non-2xx" && f[3] == "responses:":
			// Non-2xx or 3xx responses: 4
			n, _ := strconv.ParseInt(f[4], 10, 64)
			r.bad += n
		case len(f) > 2 && f[0] == "Socket" && f[1] == "errors:":
			// Socket errors: connect 0, read 0, write 0, timeout 0
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				r.bad += n
			}
		}
	}
	if got < 3 {
		return r, fmt.Errorf("wrk's report has no rate or latency distribution: %q", lastLine([]byte(out)))
	}
	return r, nil
}

// wrkDuration reads wrk's 1.23ms, 812.00us, 1.02s.
func wrkDuration(s string) time.Duration {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"m", time.Minute}, {"s", time.Second}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0
			}
			return time.Duration(f * float64(u.unit))
		}
	}
	return 0
}
