// Command load drives a running mock server with concurrent keep-alive
// clients and reports throughput and latency percentiles per request kind.
//
//	go run ./cmd/mockserver --clock manual --db /tmp/bench.db --reset &
//	go run ./bench/load -url http://127.0.0.1:8080 -c 64 -d 10s -mix get=1
//	go run ./bench/load -url http://127.0.0.1:8080 -c 64 -d 10s -mix create=1
//
// It makes its own workspace through the control API, with a rate limit and
// credits that do not get in the way, unless -token is given.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type kind struct {
	name, method, path, body string
}

var kinds = map[string]kind{
	"get":    {"get", "GET", "/api/v1/account", ""},
	"list":   {"list", "GET", "/api/v1/assets?limit=20", ""},
	"create": {"create", "POST", "/api/v1/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a load test of lighthouses","aspect_ratio":"16:9"}`},
	"models": {"models", "GET", "/api/v1/models?modality=video", ""},
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "root address of the server")
	token := flag.String("token", "", "API key to use (default: a new workspace made through the control API)")
	conc := flag.Int("c", 32, "concurrent clients")
	dur := flag.Duration("d", 10*time.Second, "duration")
	mix := flag.String("mix", "get=1", "request kinds and weights: get, list, create, models (e.g. get=8,create=2)")
	flag.Parse()

	plan, err := parseMix(*mix)
	if err != nil {
		fail(err)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc}
	client := &http.Client{Transport: transport}
	if *token == "" {
		if *token, err = makeWorkspace(client, *url); err != nil {
			fail(err)
		}
	}
	lat := make([][]time.Duration, len(plan))
	var mu sync.Mutex
	var errs, non2xx atomic.Int64
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([][]time.Duration, len(plan))
			for i := w; time.Now().Before(deadline); i++ {
				k := i % len(plan)
				req, _ := http.NewRequest(plan[k].method, *url+plan[k].path, strings.NewReader(plan[k].body))
				req.Header.Set("Authorization", "Bearer "+*token)
				if plan[k].body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				local[k] = append(local[k], time.Since(start))
				if resp.StatusCode >= 300 {
					non2xx.Add(1)
				}
			}
			mu.Lock()
			for k := range local {
				lat[k] = append(lat[k], local[k]...)
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	byKind := map[string][]time.Duration{}
	var names []string
	for k, ds := range lat {
		if _, seen := byKind[plan[k].name]; !seen {
			names = append(names, plan[k].name)
		}
		byKind[plan[k].name] = append(byKind[plan[k].name], ds...)
	}
	total := 0
	fmt.Printf("%-8s %10s %10s %10s %10s %10s\n", "kind", "requests", "req/s", "p50", "p90", "p99")
	for _, name := range names {
		all := byKind[name]
		slices.Sort(all)
		total += len(all)
		fmt.Printf("%-8s %10d %10.0f %10s %10s %10s\n", name, len(all), float64(len(all))/dur.Seconds(), pct(all, 50), pct(all, 90), pct(all, 99))
	}
	fmt.Printf("total    %10d %10.0f   errors %d, non-2xx %d, %d clients, %s\n", total, float64(total)/dur.Seconds(), errs.Load(), non2xx.Load(), *conc, *dur)
}

func parseMix(s string) ([]kind, error) {
	var plan []kind
	for _, part := range strings.Split(s, ",") {
		name, w, _ := strings.Cut(part, "=")
		k, ok := kinds[name]
		if !ok {
			return nil, fmt.Errorf("unknown kind %q (get, list, create, models)", name)
		}
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("weight of %s must be a positive integer", name)
		}
		for ; n > 0; n-- {
			plan = append(plan, k)
		}
	}
	return plan, nil
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	return ds[(len(ds)-1)*p/100].Round(time.Microsecond).String()
}

func makeWorkspace(client *http.Client, url string) (string, error) {
	body := `{"name":"load test","plan":"business","credits":1000000000000,"rate_limit_per_minute":1000000000}`
	resp, err := client.Post(url+"/_mock/workspaces", "application/json", bytes.NewBufferString(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		return "", fmt.Errorf("make a workspace: %s (%v)", resp.Status, err)
	}
	return out.Token, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}
