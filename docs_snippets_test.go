package mediamock_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mediamock/mediamock"
)

// The Go snippets of the README and of docs/, as they are written there:
// TestDocsExamplesGo checks that each block is the body of its test.

func TestReadmeQuickStart(t *testing.T) {
	srv := mediamock.RunT(t) // random port, state in t.TempDir(), closed at the end
	srv.FailNext(mediamock.FailRule{Count: 1})
	// ... your client, pointed at srv.BaseURL() with mediamock.KeyAllScopes
	if _, err := srv.RunUntilIdle(time.Hour); err != nil { // every job ends, on the simulated clock
		t.Fatal(err)
	}
}

func TestDocsRehearseFailures(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	sb := srv.Sandbox(t) // a fault in a sandbox touches it alone
	for _, spec := range []mediamock.FaultSpec{
		{Kind: "reset", Operation: "createGeneration", First: 1},
		{Kind: "empty_reply", Operation: "getAccount", Probability: new(0.2)},
		{Kind: "truncate", AfterBytes: new(int64(100))},
		{Kind: "slow_body", Class: "files", BytesPerSecond: 200_000},
		{Kind: "garbage_then_close", First: 1},
		{Kind: "latency", Distribution: "uniform", MinMS: new(int64(50)), MaxMS: new(int64(400))},
		{Kind: "status", Status: 429, Operation: "listAssets", First: 2},
		{Kind: "file_expiry", TTLSeconds: new(int64(3600))}, // then srv.Advance(time.Hour + time.Second)
		{Kind: "file_truncate", Modality: "video", AfterFraction: new(0.3)},
		{Kind: "mcp_session_expire", First: 1},
		{Kind: "mcp_stream_drop", Operation: "getGeneration", First: 1},
		{Kind: "mcp_unavailable", First: 1},
	} {
		if _, err := sb.AddFault(spec); err != nil { // a bad spec is refused whole
			t.Fatal(err)
		}
	}
	for _, f := range sb.Coverage().FailurePaths {
		t.Log(f.Kind, f.Met, f.Next)
	}
}

func TestDocsProductionSurprises(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	sb := srv.Sandbox(t)
	for _, spec := range []mediamock.FaultSpec{
		{Kind: "moderation", First: 1},                            // the next creation: 422 content_moderated
		{Kind: "moderation", At: "processing", Modality: "video"}, // videos: charged, failed, refunded
		{Kind: "output_failure", Outputs: 2, Model: "imagen-4"},   // two outputs fail, each refunded
		{Kind: "account_disconnected", Platform: "instagram"},     // reconnect it in the app
	} {
		if _, err := sb.AddFault(spec); err != nil {
			t.Fatal(err)
		}
	}
	// ... your client, with sb.APIKey; then sb.RunUntilIdle(time.Hour)
	ledger, err := sb.Ledger() // every charge and refund, with the balance after it
	if err != nil {
		t.Fatal(err)
	}
	t.Log(ledger)
}

func TestDocsEvolve(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithEvolve()) // every answer (Options.Evolve)
	sb := srv.Sandbox(t)                             // or one sandbox's, some parts
	if _, err := sb.AddFault(mediamock.FaultSpec{Kind: "evolve", Enums: new(false)}); err != nil {
		t.Fatal(err)
	}
	for _, e := range sb.Journal(mediamock.JournalFilter{}) {
		t.Log(e.Path, e.Evolved)
	}
}

func TestDocsGradeYourClient(t *testing.T) {
	srv := mediamock.RunT(t)
	sb := srv.Sandbox(t)
	defer sb.AssertGoodClient(t) // or AssertGoodClient(t, "error") for errors alone
	// ... the client under test, with sb.APIKey
	r, err := sb.Report("poll-unknown-id")
	if err != nil || r.Failed {
		t.Fatal(err, r.Findings)
	}
}

func TestDocsWaitForARequest(t *testing.T) {
	srv := mediamock.RunT(t)
	seq := srv.JournalSeq()
	go func() { // the client under test, acting in the background
		req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	e, err := srv.AwaitRequest(ctx, mediamock.JournalFilter{After: seq, Operation: "getAccount"})
	if err != nil {
		t.Fatal(err) // the client never sent it
	}
	t.Log(e.Seq, e.Status)
}
