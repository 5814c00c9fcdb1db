// Command sandboxes measures the cost of sandboxes on a running server: it
// builds and starts the server binary, then, over the control API,
//
//   - creates and deletes sandboxes in rounds (default 2 rounds of 1,000,
//     by 4 clients at once) and reports the median and p99 of a create and
//     of a delete, and the server's RSS and state file after each round:
//     what a long CI day of suites leaves behind;
//
//   - creates -existing sandboxes that stay, then times create+delete of
//     one more beside them.
//
//     go run ./bench/sandboxes
//     go run ./bench/sandboxes -rounds 3 -n 1000 -existing 10000
//
// It listens on loopback only.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 2, "rounds of create-then-delete")
	n := flag.Int("n", 1000, "sandboxes per round")
	clients := flag.Int("c", 4, "clients at once")
	existing := flag.Int("existing", 10000, "sandboxes that stay while one more is created and deleted (0 skips)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "sandboxes-")
	check(err)
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "mockserver")
	fmt.Println("building the server binary (not part of any measurement)")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockserver")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	check(build.Run())

	addr := freeAddr()
	db := filepath.Join(dir, "state.db")
	srv := exec.Command(bin, "--addr", addr, "--db", db, "--reset", "--clock", "manual", "--log-level", "warn",
		"--max-sandboxes", strconv.Itoa(max(*existing+10, *n+10)))
	srv.Stderr = os.Stderr
	check(srv.Start())
	defer srv.Process.Kill()
	base := "http://" + addr + "/_mock"
	waitReady(base)
	report := func(what string) {
		fmt.Printf("%-38s RSS %6.1f MB   state file %6.1f MB\n", what, float64(rss(srv.Process.Pid))/1024, float64(size(db))/(1<<20))
	}
	report("idle, on the default fixtures")

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients}}
	for r := 1; r <= *rounds; r++ {
		ids := make([]string, *n)
		creates := parallel(*n, *clients, func(i int) {
			ids[i] = create(client, base, `{}`)
		})
		deletes := parallel(*n, *clients, func(i int) {
			call(client, "DELETE", base+"/sandboxes/"+ids[i], "{}", http.StatusOK)
		})
		fmt.Printf("round %d: %d sandboxes started as the default fixture's Acme Studio (library, accounts, kits), %d clients\n", r, *n, *clients)
		fmt.Printf("  create  median %s  p99 %s\n", pct(creates, 50), pct(creates, 99))
		fmt.Printf("  delete  median %s  p99 %s\n", pct(deletes, 50), pct(deletes, 99))
		report(fmt.Sprintf("after %d created and deleted", r**n))
	}

	if *existing > 0 {
		fmt.Printf("creating %d sandboxes that stay (empty libraries)...\n", *existing)
		parallel(*existing, *clients, func(int) { create(client, base, `{"empty_library":true}`) })
		report(fmt.Sprintf("with %d sandboxes", *existing))
		times := parallel(200, 1, func(int) {
			id := create(client, base, `{}`)
			call(client, "DELETE", base+"/sandboxes/"+id, "{}", http.StatusOK)
		})
		fmt.Printf("create+delete beside %d sandboxes: median %s  p99 %s\n", *existing, pct(times, 50), pct(times, 99))
	}
}

// parallel runs fn(0..n-1) on c goroutines and returns each call's time.
func parallel(n, c int, fn func(i int)) []time.Duration {
	times := make([]time.Duration, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for i := range next {
				start := time.Now()
				fn(i)
				times[i] = time.Since(start)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return times
}

func create(client *http.Client, base, body string) string {
	var sb struct{ ID string }
	check(json.Unmarshal(call(client, "POST", base+"/sandboxes", body, http.StatusCreated), &sb))
	return sb.ID
}

func call(client *http.Client, method, url, body string, want int) []byte {
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	check(err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	check(err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		check(fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, data))
	}
	return data
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}

// rss is a process's resident set in KiB (Linux).
func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return -1
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

func waitReady(base string) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	check(fmt.Errorf("the server did not answer within a minute"))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxes:", err)
		os.Exit(1)
	}
}
