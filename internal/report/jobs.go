package report

import (
	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/sim"
)

// The jobs the report follows: when each finished (asked of the engine
// once) and how the client read it.

type jobKey struct {
	ws   uint64
	kind string
	id   uint64
}

type jobState struct {
	Job
	job      sim.Job
	known    bool
	seenDone bool
	readIDs  []string
	// trouble is the file trouble count of the workspace when the job was
	// last read: a read after new trouble is a re-read for an address.
	trouble int
}

// sawDone records the answer that first showed the job done, and reports
// whether it came late.
func (s *jobState) sawDone(e *controlapi.JournalEntry) (late bool) {
	s.seenDone = true
	lag := e.SimTime.Sub(s.job.FinishedAt.Time()).Seconds()
	s.LagSeconds = &lag
	return lag > 30
}

// job is the state of a job the client knows by id, looked up once.
func (g *grader) job(ws uint64, kind string, id uint64) (*jobState, error) {
	k := jobKey{ws: ws, kind: kind, id: id}
	if s, ok := g.jobs[k]; ok {
		return s, nil
	}
	ref := sim.JobRef{WorkspaceID: ws, AssetID: id}
	if kind == "encore" {
		ref = sim.JobRef{WorkspaceID: ws, EncoreID: id}
	}
	j, ok, err := g.in.Job(ref)
	if err != nil {
		return nil, err
	}
	if ok && kind == "generation" && len(j.AssetIDs) > 0 && j.AssetIDs[0] != id {
		// Another output of the same generation: the job is its first
		// asset's.
		s, err := g.job(ws, kind, j.AssetIDs[0])
		if err == nil {
			g.jobs[k] = s
		}
		return s, err
	}
	s := &jobState{Job: Job{Kind: kind, ID: id, WorkspaceID: ws, Status: j.Status}, job: j, known: ok}
	if ok {
		g.jobs[k] = s
		g.order = append(g.order, k)
	}
	return s, nil
}
