// Command bare is the bare limit bench/compare holds the mock to: the
// least a Go program can do to answer an HTTP request, a net/http server
// whose handler writes a fixed body. It is a program of its own, built
// and started like the mock (not the compare program run again, whose
// package initialisation it would pay for and which would serve from its
// initialisation, on the main goroutine's locked thread).
//
//	bare -addr 127.0.0.1:8091 -body page.json
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "address to listen on")
	path := flag.String("body", "", "file whose bytes every answer carries")
	flag.Parse()
	body, err := os.ReadFile(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	size := strconv.Itoa(len(body))
	err = http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", size)
		w.Write(body)
	}))
	fmt.Fprintln(os.Stderr, "bare:", err)
	os.Exit(1)
}
