// Package testkit holds the helpers the test packages share: an engine on
// the default fixture (Engine), requests to a server's REST API with a key,
// raw requests with a Host and headers, the error code of an error body,
// calls of the control API checked against control.json, the OAuth client
// of an agent (discovery, registration, authorization), a transport that
// adds a bearer key, bounded waits on a channel or on a condition that
// wakes on change, and the small inputs (pictures, data URIs, a buffer safe
// for concurrent writes) several packages' tests build.
//
// Only tests import it: no package of the server or of the command does, so
// that neither testing nor testify reaches the binary. Check it with
//
//	go list -deps ./cmd/mockserver | grep -c testkit   # 0
//
// It imports neither the root package nor any front: a server is whatever
// has a URL and a client (Server: *mediamock.Server, or Remote, a server
// process a test started), so that the tests inside the packages the root
// imports (gate, front, rest, wire, oauth, router), and the root's own, use
// it too. Every helper that can fail a test takes a testing.TB and calls
// Helper.
//
//	srv := mediamock.RunT(t)
//	status, account, _ := testkit.REST(t, srv, mediamock.KeyReadOnly, "GET", "/account", nil)
//	code, body := testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"2m"}`)
//	eng := testkit.Engine(t) // an engine alone: the default fixture, a manual clock at sim.DefaultEpoch
package testkit
