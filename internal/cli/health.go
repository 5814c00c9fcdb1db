package cli

import (
	"flag"
	"time"
)

// DefaultHealthURL is where the health command asks when nothing says
// where the server is.
const DefaultHealthURL = "http://127.0.0.1:8080"

// Health is what the health command's flags set.
type Health struct {
	URL, DB string
	Timeout time.Duration
}

// HealthFlags makes the health command's flag set and the settings it
// parses into. Its flags read no variable of their own: --db defaults to
// the server's MOCKSERVER_DB, and without --url the address comes from the
// server's MOCKSERVER_ADDR (https with MOCKSERVER_TLS or
// MOCKSERVER_TLS_CERT).
func HealthFlags(getenv func(string) string) (*Health, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver health", flag.ContinueOnError)
	h := &Health{}
	db := getenv(EnvName("db"))
	if db == "" {
		db = "mediamock.db"
	}
	fs.StringVar(&h.URL, "url", "", "root address of the server (default: from "+EnvName("addr")+" when set, else the address the server wrote beside its state file, else "+DefaultHealthURL+")")
	fs.StringVar(&h.DB, "db", db, "the server's state file, beside which it writes the address it listens on")
	fs.DurationVar(&h.Timeout, "timeout", 3*time.Second, "how long to wait for an answer")
	return h, fs
}
