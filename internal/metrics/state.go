package metrics

import (
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mediamock/mediamock/sim"
)

var (
	jobsDesc = define("jobs", "gauge",
		"Jobs held, by modality (encore for Encore creations) and status.", "modality", "status")
	queuedDesc = define("queue_depth", "gauge",
		"Jobs waiting for a slot, by modality, over every workspace.", "modality")
	runningDesc = define("jobs_running", "gauge",
		"Jobs holding a slot, by modality, over every workspace.", "modality")
	limitDesc = define("concurrency_limit", "gauge",
		"How many jobs of a modality one workspace runs at once.", "modality")
	atLimitDesc = define("workspaces_at_concurrency_limit", "gauge",
		"Workspaces running their limit of jobs of a modality: their next job queues.", "modality")
	durationDesc = define("job_duration_seconds", "histogram",
		"Durations of the jobs that ended, from creation to the final status, on the mock's clock, by modality and final status.", "modality", "status")
	creditsDesc = define("credits_total", "counter",
		"Credits moved, by ledger entry type: charge, refund, grant, gift (what a monthly gift covered).", "movement")
	pollsDesc = define("long_polls_open", "gauge",
		"Reads waiting for a job to change (wait_seconds), REST and MCP.")
	journalWaitsDesc = define("journal_waits_open", "gauge",
		"Waits for a journal entry in progress (GET /_mock/journal/wait).")
	sessionsDesc = define("mcp_sessions_open", "gauge",
		"MCP sessions open.")
	sandboxesDesc = define("sandboxes", "gauge",
		"Sandboxes that exist.")
	scrapeErrorDesc = define("state_read_errors_total", "counter",
		"Scrapes whose read of the state failed (the state's metrics were left out).")
)

// stateCollector reads the state at a scrape.
type stateCollector struct {
	src    Sources
	failed atomic.Uint64
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobsDesc, queuedDesc, runningDesc, limitDesc, atLimitDesc, durationDesc,
		creditsDesc, pollsDesc, journalWaitsDesc, sessionsDesc, sandboxesDesc, scrapeErrorDesc} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	if c.src.Engine != nil {
		s, err := c.src.Engine.Stats()
		if err != nil {
			c.failed.Add(1)
		} else {
			c.collectEngine(ch, s, gauge)
		}
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.CounterValue, float64(c.failed.Load()))
	}
	if f := c.src.MCPSessions; f != nil {
		gauge(sessionsDesc, f())
	}
	if f := c.src.JournalWaits; f != nil {
		gauge(journalWaitsDesc, f())
	}
}

func (c *stateCollector) collectEngine(ch chan<- prometheus.Metric, s sim.Stats, gauge func(*prometheus.Desc, int, ...string)) {
	lanes := sim.Lanes()
	known := func(v string, in []string) string {
		if slices.Contains(in, v) {
			return v
		}
		return "other"
	}
	// Every modality and status is listed, at 0 too: a dashboard's series
	// do not appear and vanish.
	jobs := map[sim.JobKey]int{}
	for _, l := range lanes {
		for _, st := range sim.JobStatuses {
			jobs[sim.JobKey{Lane: l, Status: st}] = 0
		}
	}
	for k, n := range s.Jobs {
		jobs[sim.JobKey{Lane: known(k.Lane, lanes), Status: known(k.Status, sim.JobStatuses)}] += n
	}
	for k, n := range jobs {
		gauge(jobsDesc, n, k.Lane, k.Status)
	}
	for _, l := range s.Lanes {
		gauge(queuedDesc, l.Queued, l.Lane)
		gauge(runningDesc, l.Running, l.Lane)
		gauge(limitDesc, l.Limit, l.Lane)
		gauge(atLimitDesc, l.AtLimit, l.Lane)
	}
	for _, h := range s.Durations {
		buckets := make(map[float64]uint64, len(sim.JobDurationBuckets))
		for i, le := range sim.JobDurationBuckets {
			buckets[le] = h.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(durationDesc, h.Count, h.Sum, buckets,
			known(h.Lane, lanes), known(h.Status, sim.JobStatuses))
	}
	for _, typ := range []string{sim.LedgerCharge, sim.LedgerRefund, sim.LedgerGrant, sim.LedgerGift} {
		ch <- prometheus.MustNewConstMetric(creditsDesc, prometheus.CounterValue, float64(s.Credits[typ]), typ)
	}
	gauge(pollsDesc, s.LongPolls)
	gauge(sandboxesDesc, s.Sandboxes)
}
