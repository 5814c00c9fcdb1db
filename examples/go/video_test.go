package client_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mediamock/mediamock"
)

func TestVideoCompletes(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithSeed(7)) // random port, state in t.TempDir(), closed at the end

	req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations",
		strings.NewReader(`{"modality":"video","model_id":"veo-3-fast","prompt":"a fox","duration":8}`))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var created struct {
		Assets []struct{ ID uint64 } `json:"assets"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&created) != nil {
		t.Fatalf("create: %s", resp.Status)
	}

	if _, err := srv.RunUntilIdle(time.Hour); err != nil { // every job ends, in order, on the simulated clock
		t.Fatal(err)
	}
	if a, _ := srv.Asset(created.Assets[0].ID); a.Status != "completed" {
		t.Fatalf("status %s", a.Status)
	}
}
