package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRunMCPBadSettings(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  fakeEnv
		want string // what the message must say
	}{
		{"no key", []string{"mcp"}, nil, "api-key"},
		{"unknown key", []string{"mcp", "--api-key", "mk_test_nope"}, nil, "--api-key"},
		{"unknown key from the environment", []string{"mcp"}, fakeEnv{"MOCKSERVER_API_KEY": "mk_test_nope"}, "MOCKSERVER_API_KEY"},
		{"bad clock", []string{"mcp", "--api-key", "mk_test_all_scopes", "--clock", "sideways"}, nil, "clock"},
		{"argument", []string{"mcp", "--api-key", "mk_test_all_scopes", "extra"}, nil, "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), c.args, c.env.get, strings.NewReader(""), &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q does not name %s", stderr.String(), c.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing: it is the protocol's", stdout.String())
			}
		})
	}
}

// TestRunMCPServesStdio runs the mcp command in-process, the way main does,
// with an MCP client on the other end of its stdin and stdout.
func TestRunMCPServesStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := newLogSink()
	exit := make(chan int, 1)
	go func() {
		exit <- Run(context.Background(), []string{"mcp", "--clock", "virtual", "--seed", "7"},
			fakeEnv{"MOCKSERVER_API_KEY": "mk_test_all_scopes"}.get, inR, outW, stderr)
		outW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v; log:\n%s", err, stderr.String())
	}
	// The server tells MCP clients the version mockserver version prints.
	if info := cs.InitializeResult().ServerInfo; info.Name != "mediamock" || info.Version != version {
		t.Errorf("serverInfo %+v, want mediamock %s", info, version)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_account", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_account: %v %+v", err, res)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "Acme Studio") {
		t.Errorf("get_account says %q", text)
	}
	cs.Close() // closes stdin: the command ends
	if code := <-exit; code != 0 {
		t.Fatalf("exit code %d; log:\n%s", code, stderr.String())
	}
	for _, want := range []string{`msg="mediamock ready" mcp=stdio`, "seed=7", "msg=stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, stderr.String())
		}
	}
}
