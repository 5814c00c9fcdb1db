package mediamock_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mediamock/mediamock"
)

// call makes an API request with the all-scopes test key.
func call(srv *mediamock.Server, method, path, body string) map[string]any {
	req, _ := http.NewRequest(method, srv.BaseURL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return out
}

// A generation moves through its states as the test moves the clock.
func ExampleServer_Advance() {
	srv, _ := mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockManual})
	defer srv.Close()

	gen := call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse [mock:delay=20]"}`)
	id := int(gen["assets"].([]any)[0].(map[string]any)["id"].(float64))
	fmt.Println(gen["status"])

	srv.Advance(20 * time.Second)
	fmt.Println(call(srv, "GET", fmt.Sprintf("/generations/%d", id), "")["status"])
	// Output:
	// processing
	// completed
}

// On the virtual clock (the default), a client that waits moves time for
// itself: polling code runs in tests without waiting.
func ExampleNew() {
	srv, _ := mediamock.New(mediamock.Options{NoListener: true})
	defer srv.Close()

	gen := call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"waves","count":2,"wait_seconds":55}`)
	fmt.Println(gen["status"], gen["credits_charged"])
	// Output: completed 12
}

// Injected failures refund the credits; the ledger explains the balance.
func ExampleServer_FailNext() {
	srv, _ := mediamock.New(mediamock.Options{NoListener: true})
	defer srv.Close()

	srv.FailNext(mediamock.FailRule{Count: 1, Modality: "audio"})
	gen := call(srv, "POST", "/generations", `{"modality":"audio","model_id":"eleven-multilingual-v2","prompt":"It will rain.","wait_seconds":55}`)
	fmt.Println(gen["status"])

	ws, _ := srv.WorkspaceID(mediamock.KeyAllScopes)
	ledger, _ := srv.Ledger(ws)
	for _, e := range ledger[len(ledger)-2:] {
		fmt.Println(e.Type, e.Amount, e.Balance)
	}
	// Output:
	// failed
	// charge 3 4997
	// refund 3 5000
}
