package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// fetchPage reads one list page from the mock, for the bare server's body.
func fetchPage(bin, dir, fix string) []byte {
	addr := freeAddr()
	cmd := exec.Command(bin, "--addr", addr, "--db", filepath.Join(dir, "page.db"), "--reset", "--fixtures", fix, "--clock", "manual")
	check(cmd.Start())
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	for i := 0; ; i++ {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/assets?limit=20", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return b
			}
		}
		if i > 60000 {
			check(fmt.Errorf("the mock did not answer a list page"))
		}
		time.Sleep(time.Millisecond)
	}
}

// bareServer is the bare server (package bare, built as bin) serving body
// on a free port, and its address.
func bareServer(bin, dir string, body []byte) (*exec.Cmd, string) {
	f, err := os.CreateTemp(dir, "bare-body-")
	check(err)
	_, err = f.Write(body)
	check(err)
	check(f.Close())
	addr := freeAddr()
	return exec.Command(bin, "-addr", addr, "-body", f.Name()), addr
}
