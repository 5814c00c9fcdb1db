// Command mockserver runs the media generation service simulator.
//
//	go run ./cmd/mockserver                      # embedded fixtures, http://127.0.0.1:8080
//	mockserver --clock virtual --seed 7 --db /tmp/state.db
//	MOCKSERVER_ADDR=0.0.0.0:8080 mockserver      # every flag is also an environment variable
//	mockserver health --url http://127.0.0.1:8080  # exit 0 when the server is healthy
//	mockserver mcp --api-key mk_test_all_scopes  # an MCP server over stdio, with a simulation of its own
//	mockserver mcp --api-key mk_test_all_scopes --url http://127.0.0.1:8080  # stdio bridged to a running server
//	mockserver mcp --control  # the control MCP server over stdio: the control API as tools
//	mockserver proxy --upstream https://api.example.com  # check a real server's exchanges against the contract
//	mockserver fixtures timing --recording recorded --write recorded/fixture.json  # the timing a recording learned, as fixture timing
//	mockserver conformance --url https://api.example.com/api/v1 --junit conformance.xml  # the conformance suite, keys from MOCKSERVER_CONFORMANCE_KEY_*
//	mockserver spec-diff --against theirs.json --journal journal.json  # what changed, what your traffic used first
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/mediamock/mediamock/internal/mcp"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// Run runs the command with its arguments, environment and standard
// streams; it returns the exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mcp" {
		return runMCP(ctx, args[1:], getenv, stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "health" {
		return runHealth(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "proxy" {
		return runProxy(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "conformance" {
		return runConformance(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "report" {
		return runReport(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "spec-diff" {
		return runSpecdiff(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "fixtures" {
		return runFixtures(args[1:], stdout, stderr)
	}
	if len(args) > 0 && isVersion(args[0]) {
		fmt.Fprintln(stdout, "mockserver", version)
		return 0
	}
	if len(args) > 0 && args[0] == "help" { // mockserver help [command]: the command's --help
		return Run(ctx, append(slices.Clone(args[1:]), "--help"), getenv, stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "keys" {
		return runKeys(args[1:], getenv, stdout, stderr)
	}
	mediamock.Preload()
	return runServe(ctx, args, getenv, stdin, stdout, stderr)
}

// isVersion reports whether arg asks for the version: the version command,
// or the flag other command line tools answer (--version, -version, -v).
func isVersion(arg string) bool {
	switch arg {
	case "version", "--version", "-version", "-v":
		return true
	}
	return false
}

// commands lists every command, for the errors that name one.
const commands = "mcp, keys, proxy, fixtures timing, conformance, report, spec-diff, health, version, help"

// commandLine ends a command whose command line did not parse: stop is
// true with exit code 0 after --help and 2 after an error, told to the
// user once (name prefixes an error not told yet).
func commandLine(name string, err error, stderr io.Writer) (code int, stop bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	case !errors.Is(err, errShown):
		fmt.Fprintln(stderr, name+":", err)
	}
	return 2, true
}

// errShown is a command line error already told to the user.
var errShown = errors.New("bad command line")

// parseCommandLine parses a command that takes flags only: its flags
// (parseFlags), no argument after them, then the environment variables of
// the flags the command line left out (applyEnv, whose sources it returns).
func parseCommandLine(fs *flag.FlagSet, args []string, env, getenv func(string) string, stdout, stderr io.Writer) (map[string]string, error) {
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return applyEnv(fs, env, getenv)
}

// parseFlags parses a command's flags: --help prints the usage on stdout
// (flag.ErrHelp, exit 0); a bad flag prints one line and a hint on
// stderr, not the whole usage (errShown, exit 2).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(stderr)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return err
	}
	fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for its flags.\n", fs.Name(), err, fs.Name())
	return errShown
}

// version is stamped at build time: -ldflags "-X main.version=1.2.3";
// otherwise it comes from the module's build information (a tagged module
// version, or the commit of a checkout), else "dev".
var version = "dev"

func init() {
	defer func() { mcp.SetVersion(version) }() // MCP clients are told the same
	if version != "dev" {
		return
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		version = v
		return
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) >= 12 {
		version = "dev-" + rev[:12] + dirty
	}
}

// runKeys prints the test credentials of the fixtures, one a line.
func runKeys(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fixtures, seed, fs := cli.KeysFlags(getenv)
	if err := parseFlags(fs, args, stdout, stderr); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	keys, err := mediamock.FixtureKeys(*fixtures, *seed)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver keys:", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tTYPE\tWORKSPACE\tPLAN\tSCOPES")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Token, k.Type, k.Workspace, k.Plan, strings.Join(k.Scopes, " "))
	}
	tw.Flush()
	return 0
}
