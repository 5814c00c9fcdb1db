package report_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/junit"
	"github.com/mediamock/mediamock/internal/report"
	"github.com/mediamock/mediamock/internal/testkit"
)

// client is a reference client of the service, alone on a server of its
// own (on the virtual clock, with a journal that holds its whole run): it
// sleeps by moving the mock's clock, so its report is the same run to run.
type client struct {
	t   *testing.T
	srv *mediamock.Server
	key string
}

func newClient(t *testing.T, key string) *client {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Seed, o.JournalSize = 7, 5000 })
	return &client{t: t, srv: srv, key: key}
}

func (c *client) sleep(d time.Duration) { require.NoError(c.t, c.srv.Advance(d)) }

// do sends a request of the service's API; a transport error is returned
// as status 0.
func (c *client) do(method, path, body string, header ...string) (int, http.Header, []byte) {
	c.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = c.srv.BaseURL() + path
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.srv.Client().Do(req)
	if err != nil {
		return 0, nil, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, resp.Header, data
	}
	return resp.StatusCode, resp.Header, data
}

type generation struct {
	Status string `json:"status"`
	Assets []struct {
		ID  int64  `json:"id"`
		URL string `json:"url"`
	} `json:"assets"`
}

func decode(t *testing.T, data []byte) generation {
	var g generation
	require.NoError(t, json.Unmarshal(data, &g), "%s", data)
	return g
}

const (
	create     = `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse at dusk"}`
	createWait = `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse at dusk","wait_seconds":55}`
)

// naive polls every 100 ms without wait_seconds, ignores Retry-After, and
// reads the job once more after it is done.
func (c *client) naive() {
	status, _, data := c.do("POST", "/generations", create)
	require.Equal(c.t, http.StatusCreated, status, "%s", data)
	id := decode(c.t, data).Assets[0].ID
	for range 2000 {
		c.sleep(100 * time.Millisecond)
		status, _, data = c.do("GET", fmt.Sprintf("/generations/%d", id), "")
		if status == http.StatusOK && decode(c.t, data).Status == "completed" {
			break
		}
	}
	c.do("GET", fmt.Sprintf("/generations/%d", id), "") // once more, for the URL
}

// good long-polls with wait_seconds, honours Retry-After, resumes a cut
// download with Range, and reads the asset again for a fresh address when
// one has expired.
func (c *client) good() {
	status, h, data := c.do("POST", "/generations", createWait)
	for status == http.StatusTooManyRequests {
		secs, _ := strconv.Atoi(h.Get("Retry-After"))
		c.sleep(time.Duration(secs) * time.Second)
		status, h, data = c.do("POST", "/generations", createWait)
	}
	require.Equal(c.t, http.StatusCreated, status, "%s", data)
	g := decode(c.t, data)
	id := g.Assets[0].ID
	for g.Status != "completed" && g.Status != "failed" {
		status, h, data = c.do("GET", fmt.Sprintf("/generations/%d?wait_seconds=55", id), "")
		if status == http.StatusTooManyRequests {
			secs, _ := strconv.Atoi(h.Get("Retry-After"))
			c.sleep(time.Duration(secs) * time.Second)
			continue
		}
		require.Equal(c.t, http.StatusOK, status, "%s", data)
		g = decode(c.t, data)
	}
	require.Equal(c.t, "completed", g.Status)
	c.download(id, g.Assets[0].URL)
}

// download fetches a file, resuming with Range when the answer is cut,
// and reading the asset again when its address has expired.
func (c *client) download(id int64, url string) []byte {
	var got []byte
	for range 10 {
		var header []string
		if len(got) > 0 {
			header = []string{"Range", fmt.Sprintf("bytes=%d-", len(got))}
		}
		status, h, data := c.do("GET", url, "", header...)
		switch {
		case status == http.StatusForbidden && strings.Contains(string(data), "file_url_expired"):
			_, _, fresh := c.do("GET", fmt.Sprintf("/generations/%d", id), "")
			url = decode(c.t, fresh).Assets[0].URL
		case status == http.StatusOK || status == http.StatusPartialContent:
			got = append(got, data...)
			if total := h.Get("Content-Length"); total != "" && strconv.Itoa(len(data)) == total {
				return got
			}
		case status == 0:
			got = append(got, data...) // cut: what arrived stays
		}
	}
	c.t.Fatalf("the download never finished")
	return nil
}

func (c *client) report(failOn ...string) report.Report {
	c.t.Helper()
	var r report.Report
	require.NoError(c.t, json.Unmarshal(c.reportBytes("json", failOn...), &r))
	return r
}

// reportBytes is the report as the control API answers it, in a format.
func (c *client) reportBytes(format string, failOn ...string) []byte {
	c.t.Helper()
	status, body := testkit.Control(c.t, c.srv, "GET", "/report?format="+format+"&fail_on="+strings.Join(failOn, ","), "")
	require.Equal(c.t, http.StatusOK, status, body)
	return []byte(body)
}

func ids(r report.Report) []string {
	out := []string{}
	for _, f := range r.Findings {
		out = append(out, f.ID)
	}
	return out
}

func finding(t *testing.T, r report.Report, id string) report.Finding {
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no finding %s in %v", id, ids(r))
	return report.Finding{}
}

// fit is the fix a rule gives in one of its cases.
func fit(t *testing.T, id string, i int) string {
	rule, ok := report.RuleOf(id)
	require.True(t, ok, id)
	require.Greater(t, len(rule.Fits), i, id)
	return rule.Fits[i].Fix
}

// reference runs the reference clients of report.ReferenceClients, each
// on a server of its own, and checks what is particular to each report.
var reference = map[string]struct {
	run   func(t *testing.T) *client
	check func(t *testing.T, c *client, r report.Report)
}{
	"naive": {
		run: func(t *testing.T) *client {
			c := newClient(t, mediamock.KeyFreePlan) // the free plan: 20 requests a minute
			c.naive()
			return c
		},
		check: func(t *testing.T, _ *client, naive report.Report) {
			// Polling every 100 ms spends the free plan's 20 requests in
			// two seconds: the poller is refused until the window reopens,
			// and sees its job done late although it polls often.
			require.Len(t, naive.Jobs, 1)
			assert.False(t, naive.Jobs[0].Waited)
			assert.GreaterOrEqual(t, naive.Jobs[0].Reads, 19, "the reads the window let through")
			assert.Equal(t, 1, naive.Jobs[0].ReadsAfter)
			require.NotNil(t, naive.Jobs[0].LagSeconds)
			assert.Greater(t, *naive.Jobs[0].LagSeconds, 30.0, "refused until the window reopened")
			assert.Greater(t, naive.Summary.RateLimited, 100)
			require.NotEmpty(t, naive.Summary.Minutes)
			first := naive.Summary.Minutes[0]
			assert.Greater(t, first.Reads, 100, "the first minute went on reads")
			assert.Equal(t, first.Requests-20, first.RateLimited, "20 let through, the rest refused")
			assert.Equal(t, naive.Summary.RateLimited, finding(t, naive, "rate-limited").Count)
			assert.NotEmpty(t, finding(t, naive, "retry-after-ignored").RequestIDs)
			nb := finding(t, naive, "no-backoff")
			assert.Equal(t, fit(t, "no-backoff", 0), nb.Fix, "a 429 gave a Retry-After: the fix says to wait it")
			assert.Equal(t, fit(t, "late-notice", 0), finding(t, naive, "late-notice").Fix, "refused meanwhile: not told to poll more often")
			assert.Contains(t, finding(t, naive, "poll-without-wait").Detail, "1 job polled")
		},
	},
	"good": {
		run: func(t *testing.T) *client {
			g := newClient(t, mediamock.KeyAllScopes)
			_, err := g.srv.AddFault(mediamock.FaultSpec{Kind: "file_truncate", First: 1})
			require.NoError(t, err)
			g.good()
			ttl := int64(60)
			_, err = g.srv.AddFault(mediamock.FaultSpec{Kind: "file_expiry", TTLSeconds: &ttl})
			require.NoError(t, err)
			_, _, data := g.do("GET", "/assets?limit=1&status=completed", "")
			var page struct {
				Data []struct {
					ID  int64  `json:"id"`
					URL string `json:"url"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(data, &page))
			g.sleep(2 * time.Minute) // the address expires before the client downloads
			g.download(page.Data[0].ID, page.Data[0].URL)
			return g
		},
		check: func(t *testing.T, g *client, good report.Report) {
			require.Len(t, g.srv.Journal(mediamock.JournalFilter{Status: http.StatusPartialContent}), 1, "the cut download was resumed")
			require.Len(t, g.srv.Journal(mediamock.JournalFilter{Status: http.StatusForbidden}), 1, "the address expired")
			assert.False(t, good.Failed)
			require.Len(t, good.Jobs, 1)
			assert.True(t, good.Jobs[0].Waited)
			assert.Zero(t, good.Jobs[0].ReadsAfter)
			require.NotNil(t, good.Jobs[0].LagSeconds)
			assert.Zero(t, *good.Jobs[0].LagSeconds, "a long poll answers when the job ends")
		},
	},
	"duplicating": {
		run: func(t *testing.T) *client {
			d := newClient(t, mediamock.KeyAllScopes)
			_, err := d.srv.AddFault(mediamock.FaultSpec{Kind: "reset", Operation: "createGeneration", First: 1})
			require.NoError(t, err)
			status, _, _ := d.do("POST", "/generations", createWait)
			require.Zero(t, status, "the answer is lost")
			d.good() // creates again, the same body
			return d
		},
		check: func(t *testing.T, _ *client, dup report.Report) {
			f := finding(t, dup, "duplicate-creation")
			assert.Equal(t, 1, f.Count)
			assert.Len(t, f.RequestIDs, 2, "the lost creation and its repeat")
			assert.Equal(t, []int64{1, 2}, f.Seqs, "by their journal numbers")
			assert.Positive(t, f.Credits, "what it cost twice")
			assert.Contains(t, f.Detail, "1 creation repeated after a lost answer: it cost ")
			assert.NotContains(t, f.Detail, "They")
		},
	},
	"recovering": {
		run: func(t *testing.T) *client {
			c := newClient(t, mediamock.KeyAllScopes)
			_, err := c.srv.AddFault(mediamock.FaultSpec{Kind: "reset", Operation: "createGeneration", First: 1})
			require.NoError(t, err)
			status, _, _ := c.do("POST", "/generations", createWait)
			require.Zero(t, status, "the answer is lost")
			// The report's fix: look for the first creation in the library.
			status, _, data := c.do("GET", "/assets?limit=5", "")
			require.Equal(t, http.StatusOK, status, "%s", data)
			var page struct {
				Data []struct {
					ID     int64  `json:"id"`
					Status string `json:"status"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(data, &page))
			require.NotEmpty(t, page.Data)
			require.Equal(t, "completed", page.Data[0].Status, "it waited: the library shows it done")
			c.do("GET", fmt.Sprintf("/generations/%d", page.Data[0].ID), "") // once more, needlessly
			return c
		},
		check: func(t *testing.T, c *client, r report.Report) {
			f := finding(t, r, "poll-after-terminal")
			assert.Equal(t, 1, f.Count)
			list := c.srv.Journal(mediamock.JournalFilter{Operation: "listAssets"})
			require.Len(t, list, 1)
			assert.Equal(t, []int64{list[0].Seq, list[0].Seq + 1}, f.Seqs, "the library page that showed it done, then the read")
			assert.Equal(t, fit(t, "poll-after-terminal", 0), f.Fix)
			require.Len(t, r.Jobs, 1)
			require.NotNil(t, r.Jobs[0].LagSeconds, "the library showed it done")
		},
	},
	"throttled-and-polling": {
		run: func(t *testing.T) *client {
			c := newClient(t, mediamock.KeyFreePlan)
			status, _, data := c.do("POST", "/generations", create)
			require.Equal(t, http.StatusCreated, status, "%s", data)
			id := decode(t, data).Assets[0].ID
			for range 2000 {
				c.sleep(100 * time.Millisecond) // 10 requests a second
				status, h, data := c.do("GET", fmt.Sprintf("/generations/%d", id), "")
				if status == http.StatusTooManyRequests {
					secs, _ := strconv.Atoi(h.Get("Retry-After"))
					c.sleep(time.Duration(secs) * time.Second)
					continue
				}
				if status == http.StatusOK && decode(t, data).Status == "completed" {
					return c
				}
			}
			t.Fatal("the job never completed")
			return nil
		},
		check: func(t *testing.T, _ *client, r report.Report) {
			f := finding(t, r, "late-notice")
			assert.Equal(t, fit(t, "late-notice", 0), f.Fix, "told to long-poll and back off, not to poll more often")
			assert.NotContains(t, f.Fix, "Poll more often")
			assert.Equal(t, fit(t, "poll-without-wait", 0), finding(t, r, "poll-without-wait").Fix)
			require.Len(t, r.Jobs, 1)
			assert.Zero(t, r.Jobs[0].ReadsAfter)
		},
	},
	"retry-after-ignoring": {
		run: func(t *testing.T) *client {
			c := newClient(t, mediamock.KeyAllScopes)
			require.NoError(t, c.srv.ForceResponses("getGeneration", http.StatusTooManyRequests, 3))
			status, _, data := c.do("POST", "/generations", create)
			require.Equal(t, http.StatusCreated, status, "%s", data)
			id := decode(t, data).Assets[0].ID
			for range 20 {
				status, _, data = c.do("GET", fmt.Sprintf("/generations/%d?wait_seconds=55", id), "")
				if status == http.StatusTooManyRequests {
					c.sleep(100 * time.Millisecond) // whatever Retry-After said
					continue
				}
				require.Equal(t, http.StatusOK, status, "%s", data)
				if decode(t, data).Status == "completed" {
					return c
				}
			}
			t.Fatal("the job never completed")
			return nil
		},
		check: func(t *testing.T, _ *client, r report.Report) {
			assert.Equal(t, 3, finding(t, r, "rate-limited").Count)
			nb := finding(t, r, "no-backoff")
			assert.Equal(t, 3, nb.Count, "each retry 100 ms after a 429 that said to wait longer")
			assert.Equal(t, fit(t, "no-backoff", 0), nb.Fix)
			assert.Contains(t, nb.Detail, "3 retries of an operation")
		},
	},
	"stateless-mcp": {
		run: func(t *testing.T) *client {
			c := newClient(t, mediamock.KeyAllScopes)
			g := c.tool("create_generation", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse at dusk","wait_seconds":55}`)
			for g.Status != "completed" && g.Status != "failed" {
				g = c.tool("get_generation", fmt.Sprintf(`{"id":%d,"wait_seconds":55}`, g.Assets[0].ID))
			}
			return c
		},
		check: func(t *testing.T, c *client, r report.Report) {
			assert.NotEmpty(t, c.srv.Journal(mediamock.JournalFilter{Front: "mcp"}))
			require.Len(t, r.Jobs, 1)
			assert.True(t, r.Jobs[0].Waited)
		},
	},
}

// tool makes one tool call of MCP's sessionless revision (2026-07-28):
// no initialize, no session; the request says its revision and client.
func (c *client) tool(name, args string) generation {
	c.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"reference","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	status, _, data := c.do("POST", c.srv.URL()+"/mcp", body, "Accept", "application/json, text/event-stream",
		"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", name)
	require.Equal(c.t, http.StatusOK, status, "%s", data)
	var msg struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(c.t, json.Unmarshal(data, &msg), "%s", data)
	require.False(c.t, msg.Result.IsError, "%s", data)
	return decode(c.t, msg.Result.StructuredContent)
}

// TestReferenceClients: each reference client, on a server of its own on
// the virtual clock, gets exactly the findings report.ReferenceClients
// (and so client-findings.md) documents, and the same report twice over,
// byte for byte, in each form.
func TestReferenceClients(t *testing.T) {
	for _, rc := range report.ReferenceClients {
		t.Run(rc.Name, func(t *testing.T) {
			ref, ok := reference[rc.Name]
			require.True(t, ok, "reference client %s has no run in this test", rc.Name)
			var runs [2][3][]byte
			for i := range runs {
				c := ref.run(t)
				r := c.report("info", "warning", "error")
				want := rc.Findings
				if want == nil {
					want = []string{}
				}
				assert.Equal(t, want, ids(r), "the documented findings")
				assert.Equal(t, len(want) > 0, r.Failed)
				for _, f := range r.Findings {
					assert.Len(t, f.RequestIDs, len(f.Seqs))
					assert.NotEmpty(t, f.Seqs, "%s cites the requests it rests on", f.ID)
					assert.Zero(t, f.ExamplesDropped, "the journal holds the whole run")
				}
				ref.check(t, c, r)
				for k, format := range []string{"json", "text", "junit"} {
					runs[i][k] = c.reportBytes(format, "info", "warning", "error")
				}
			}
			for k, format := range []string{"json", "text", "junit"} {
				assert.Equal(t, string(runs[0][k]), string(runs[1][k]), "the same run, the same %s report", format)
			}
		})
	}
	for name := range reference {
		assert.True(t, slices.ContainsFunc(report.ReferenceClients, func(c report.ReferenceClient) bool { return c.Name == name }),
			"%s runs, but report.ReferenceClients does not document it", name)
	}
}

// TestReportForms: text for a terminal and JUnit XML for CI, the same
// findings; fail_on accepts finding ids and severities only.
func TestReportForms(t *testing.T) {
	c := newClient(t, mediamock.KeyFreePlan)
	c.naive()
	srv := c.srv
	var tok []string

	status, text := testkit.Control(t, srv, "GET", "/report?format=text&fail_on=retry-after-ignored", "", tok...)
	require.Equal(t, http.StatusOK, status, text)
	assert.Contains(t, text, "ERROR   retry-after-ignored")
	assert.Contains(t, text, "Fix: After a 429, wait")
	assert.Contains(t, text, "FAILED: a finding matches --fail-on retry-after-ignored")

	status, body := testkit.Control(t, srv, "GET", "/report?format=junit&fail_on=retry-after-ignored", "", tok...)
	require.Equal(t, http.StatusOK, status, body)
	var doc junit.Suites
	require.NoError(t, xml.Unmarshal([]byte(body), &doc))
	assert.Equal(t, len(report.Rules), doc.Tests)
	assert.Equal(t, 1, doc.Failures, "only the finding fail_on names fails")
	for _, c := range doc.Suites[0].Cases {
		switch c.Name {
		case "retry-after-ignored":
			assert.Len(t, c.Failures, 1)
		case "poll-without-wait":
			assert.Empty(t, c.Failures)
			assert.Contains(t, c.SystemOut, "WARNING (not in fail_on)")
		}
	}

	status, body = testkit.Control(t, srv, "GET", "/report?fail_on=slow", "", tok...)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `"field":"fail_on"`)
}

// TestEveryRuleIsDocumented: each rule has its words, and the control
// document lists exactly the rules' ids.
func TestEveryRuleIsDocumented(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []any `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(mediamock.ControlDocument, &doc))
	var want []any
	for _, r := range report.Rules {
		assert.NotEmpty(t, r.Title, r.ID)
		assert.NotEmpty(t, r.Means, r.ID)
		assert.NotEmpty(t, r.Fix, r.ID)
		assert.Contains(t, []string{report.Info, report.Warning, report.Error}, r.Severity, r.ID)
		want = append(want, r.ID)
	}
	assert.Equal(t, want, doc.Components.Schemas["ClientFinding"].Properties["id"].Enum)
}
