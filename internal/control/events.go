package control

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/routes"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The event stream, GET /_mock/events: server-sent events of what the
// simulation commits (jobs, publications, the ledger, the clock) and of
// the requests the journal records, for the dashboard and for scripts.

// MaxStreams bounds the event streams open at once.
const MaxStreams = 32

// journalBuffer is how many journal entries a stream holds before it drops.
const journalBuffer = 256

// heartbeat is how often an idle stream sends a comment, so that proxies
// and clients see it alive.
const heartbeat = 15 * time.Second

// streamWriteTimeout bounds each write to a stream: a client that stops
// reading is cut off instead of holding a connection forever.
const streamWriteTimeout = 30 * time.Second

// The data of each event; its "type" repeats the event's name.
type (
	clockEvent struct {
		Type string `json:"type"` // clock, or ready for the first event
		controlplane.Clock
	}
	jobEvent struct {
		Type        string       `json:"type"`
		Kind        string       `json:"kind"` // generation or encore
		ID          uint64       `json:"id"`
		JobID       uint64       `json:"job_id"`
		WorkspaceID uint64       `json:"workspace_id"`
		Status      string       `json:"status"`
		Model       string       `json:"model,omitempty"`
		Effect      string       `json:"effect,omitempty"`
		AssetIDs    []uint64     `json:"asset_ids"`
		EncoreID    uint64       `json:"encore_creation_id,omitempty"`
		Stuck       bool         `json:"stuck,omitempty"`
		Error       *sim.Problem `json:"error,omitempty"`
		At          string       `json:"at"`
	}
	publicationEvent struct {
		Type        string           `json:"type"`
		WorkspaceID uint64           `json:"workspace_id"`
		At          string           `json:"at"`
		Publication wire.Publication `json:"publication"`
	}
	ledgerEvent struct {
		Type        string          `json:"type"`
		WorkspaceID uint64          `json:"workspace_id"`
		Entry       sim.LedgerEntry `json:"entry"`
	}
	journalEvent struct {
		Type  string        `json:"type"`
		Entry journal.Entry `json:"entry"`
	}
	stateEvent struct {
		Type string `json:"type"` // workspaces or reset
		At   string `json:"at"`
	}
	overflowEvent struct {
		Type    string `json:"type"`
		Source  string `json:"source"` // engine or journal
		Dropped uint64 `json:"dropped"`
	}
)

// eventOf renders a change as an event's name and data.
func eventOf(eng *sim.Engine, c sim.Change) (string, any) {
	at := sim.FormatTime(c.At)
	switch c.Kind {
	case sim.ChangeJob:
		j := c.Job
		ev := jobEvent{Type: "job", Kind: j.Type, ID: j.ID, JobID: j.JobID, WorkspaceID: c.WorkspaceID, Status: j.Status,
			AssetIDs: j.AssetIDs, EncoreID: j.EncoreID, Stuck: j.Stuck, Error: j.Error, At: at}
		if j.Type == "encore" {
			ev.Effect = j.Model
		} else {
			ev.Model = j.Model
		}
		if ev.AssetIDs == nil {
			ev.AssetIDs = []uint64{}
		}
		return "job", ev
	case sim.ChangePublication:
		return "publication", publicationEvent{Type: "publication", WorkspaceID: c.WorkspaceID, At: at, Publication: wire.PublicationOf(*c.Publication)}
	case sim.ChangeLedger:
		return "ledger", ledgerEvent{Type: "ledger", WorkspaceID: c.WorkspaceID, Entry: *c.Ledger}
	case sim.ChangeClock:
		// The clock tells of a jump before what the jump made due is
		// applied: apply it (as any read does), so that the next event is
		// one still to come.
		eng.Settle()
		clock := controlplane.Clock{Now: at, Mode: string(c.Mode)}
		if off, ok := eng.Clock().Offset(); ok {
			secs := int64(off.Round(time.Second) / time.Second)
			clock.OffsetSeconds = &secs
		}
		if next, ok, _ := eng.NextDue(); ok {
			clock.NextEventAt = controlplane.NextEventTime(next)
		}
		return "clock", clockEvent{Type: "clock", Clock: clock}
	case sim.ChangeOverflow:
		return "overflow", overflowEvent{Type: "overflow", Source: "engine", Dropped: c.Dropped}
	default: // workspaces, reset
		return string(c.Kind), stateEvent{Type: string(c.Kind), At: at}
	}
}

// stream writes server-sent events, each write with its own deadline.
type stream struct {
	w   *edge.Writer
	rc  *http.ResponseController
	env *edge.Env
	buf bytes.Buffer
	seq uint64
}

func (s *stream) add(name string, data any) {
	s.seq++
	s.buf.WriteString("id: ")
	s.buf.WriteString(strconv.FormatUint(s.seq, 10))
	s.buf.WriteString("\nevent: ")
	s.buf.WriteString(name)
	s.buf.WriteString("\ndata: ")
	enc := json.NewEncoder(&s.buf) // one line: JSON escapes newlines in strings
	enc.SetEscapeHTML(false)
	enc.Encode(data)
	s.buf.WriteByte('\n')
}

// flush sends what was added.
func (s *stream) flush() error {
	if s.buf.Len() == 0 {
		return nil
	}
	s.rc.SetWriteDeadline(s.env.WallClock().Add(streamWriteTimeout))
	_, err := s.w.Write(s.buf.Bytes())
	s.buf.Reset()
	if err == nil {
		err = s.rc.Flush()
	}
	return err
}

// events serves the stream until the client leaves or the server stops.
func (f *Front) events(w *edge.Writer, r *http.Request, m routes.Match, _ controlplane.Scope) {
	if !f.validated(w, r, m) {
		return
	}
	if r.Context().Done() == nil {
		// Nothing could ever end it (an in-memory request without a
		// cancelable context).
		edge.WriteError(w, &sim.Error{Kind: sim.EINVALID, Code: "stream_needs_cancel",
			Message: "The event stream lasts until the client leaves: send the request with a context that can be canceled."})
		return
	}
	ctx, cancel := f.env.UntilStop(r.Context())
	defer cancel()
	sl, err := f.streams.take(clientOf(r.RemoteAddr), cancel)
	if err != nil {
		edge.WriteError(w, err)
		return
	}
	defer f.streams.release(sl)

	// Subscribe before the first event, so that nothing committed after
	// "ready" is missed.
	changes, stopChanges := f.env.Eng.Subscribe()
	defer stopChanges()
	entries, stopEntries := f.env.Journal.Subscribe(journalBuffer)
	defer stopEntries()

	s := &stream{w: w, rc: http.NewResponseController(w), env: f.env}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s.buf.WriteString("retry: 2000\n\n")
	s.add("ready", clockEvent{Type: "ready", Clock: controlplane.ClockOf(f.env.Eng)})
	if s.flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	// closed tells a client whose stream made room for another's why it
	// ends (a comment: EventSource ignores it and reconnects).
	closed := func() {
		if f.streams.wasEvicted(sl) {
			s.buf.Reset()
			s.buf.WriteString(": closed: this client opened a newer stream, or another client needed a slot\n\n")
			s.flush()
		}
	}
	for {
		select {
		case <-ctx.Done():
			closed()
			return
		case <-tick.C:
			s.buf.WriteString(": keep-alive\n\n")
		case ch, ok := <-changes:
			if !ok {
				return
			}
			s.add(eventOf(f.env.Eng, ch))
		case rec := <-entries:
			// What the request committed was published before it was
			// recorded: its changes go first.
			if !s.takeChanges(f.env.Eng, changes) {
				return
			}
			s.addEntry(rec)
		}
		// Take what else is waiting, so that a burst is one write.
		for more := true; more && s.buf.Len() < 64<<10; {
			if !s.takeChanges(f.env.Eng, changes) {
				return
			}
			select {
			case rec := <-entries:
				s.takeChanges(f.env.Eng, changes)
				s.addEntry(rec)
			default:
				more = false
			}
		}
		if ctx.Err() != nil {
			closed()
			return
		}
		if s.flush() != nil {
			return
		}
	}
}

// takeChanges adds the changes waiting; false when the subscription ended.
func (s *stream) takeChanges(eng *sim.Engine, changes <-chan sim.Change) bool {
	for {
		select {
		case ch, ok := <-changes:
			if !ok {
				return false
			}
			s.add(eventOf(eng, ch))
		default:
			return true
		}
	}
}

func (s *stream) addEntry(rec journal.Recorded) {
	if rec.Dropped > 0 {
		s.add("overflow", overflowEvent{Type: "overflow", Source: "journal", Dropped: rec.Dropped})
		return
	}
	s.add("journal", journalEvent{Type: "journal", Entry: rec.Entry})
}
