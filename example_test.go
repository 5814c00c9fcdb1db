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

// The package's usage: a client calls the API with a test key, and the
// test runs the simulation until every job has ended.
func Example() {
	srv, _ := mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockManual})
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations",
		strings.NewReader(`{"modality":"video","model_id":"veo-3-fast","prompt":"a fox in the snow","duration":8}`))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	resp, _ := srv.Client().Do(req)
	var created struct {
		Assets []struct {
			ID     uint64 `json:"id"`
			Status string `json:"status"`
		} `json:"assets"`
	}
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, created.Assets[0].Status)

	srv.RunUntilIdle(time.Hour)
	a, _ := srv.Asset(created.Assets[0].ID)
	fmt.Println(a.Status, a.DurationSeconds)
	// Output:
	// 201 queued
	// completed 8
}
