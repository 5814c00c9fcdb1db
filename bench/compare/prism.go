package main

import (
	"bufio"
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
)

// one.
func prismTarget(dir string) *target {
	t := &target{name: "Prism 5.14.2 (static)"}
	if _, err := exec.LookPath("npx"); err != nil {
		t.r.skipped = "npx is not installed"
		return t
	}
	install := exec.Command("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, "@stoplight/prism-cli@5.14.2")
	if out, err := install.CombinedOutput(); err != nil {
		t.r.skipped = "npm could not install @stoplight/prism-cli: " + strings.TrimSpace(lastLine(out))
		return t
	}
	spec, err := filepath.Abs("openapi.json")
	check(err)
	addr := freeAddr()
	host, port, _ := net.SplitHostPort(addr)
	t.cmd = exec.Command(filepath.Join(dir, "node_modules", ".bin", "prism"), "mock", "--host", host, "--port", port, "--errors=false", spec)
	t.url = "http://" + addr
	// Prism serves the document's paths without its server's base path.
	t.p = paths{ready: "/account", list: "/assets?limit=20", create: "/generations"}
	return t
}

func lastLine(b []byte) string {
	s := bufio.NewScanner(bytes.NewReader(b))
	last := ""
	for s.Scan() {
		if t := strings.TrimSpace(s.Text()); t != "" {
			last = t
		}
	}
	return last
}
