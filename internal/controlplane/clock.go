package controlplane

import (
	"net/http"
	"time"

	"github.com/mediamock/mediamock/sim"
)

type healthJSON struct {
	Status string `json:"status"`
	Clock  string `json:"clock"`
	Now    string `json:"now"`
}

// health answers 200 while the server serves, 503 once it is stopping.
func health(r *request, _ none) (int, any, error) {
	status, code := "ok", http.StatusOK
	if r.p.Stop.Err() != nil {
		status, code = "stopping", http.StatusServiceUnavailable
	}
	clock := r.p.Eng.Clock()
	return code, healthJSON{Status: status, Clock: string(clock.Mode()), Now: sim.FormatTime(clock.Now())}, nil
}

// Clock is the clock as the control API shows it.
type Clock struct {
	Now         string `json:"now"`
	Mode        string `json:"mode"`
	NextEventAt string `json:"next_event_at,omitempty"`
	// OffsetSeconds is how far a real clock is ahead of the wall clock
	// (negative: behind), in whole seconds; absent in the other modes.
	OffsetSeconds *int64 `json:"offset_seconds,omitempty"`
}

// ClockOf renders the engine's clock.
func ClockOf(eng *sim.Engine) Clock {
	c := eng.Clock()
	out := Clock{Now: sim.FormatTime(c.Now()), Mode: string(c.Mode())}
	if off, ok := c.Offset(); ok {
		secs := int64(off.Round(time.Second) / time.Second)
		out.OffsetSeconds = &secs
	}
	if next, ok, _ := eng.NextDue(); ok {
		out.NextEventAt = NextEventTime(next)
	}
	return out
}

// NextEventTime renders when the next event is due in whole seconds, like
// every time of the API, rounded up: moving the clock to it fires the event.
func NextEventTime(t time.Time) string {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return sim.FormatTime(t)
}

func (r *request) clock() (int, any, error) { return http.StatusOK, ClockOf(r.p.Eng), nil }

func getClock(r *request, _ none) (int, any, error) { return r.clock() }

type advanceInput struct {
	Body struct {
		Seconds  *float64 `json:"seconds"`
		Duration string   `json:"duration"`
	} `body:""`
}

func advance(r *request, in advanceInput) (int, any, error) {
	body := in.Body
	d := time.Duration(0)
	if body.Seconds != nil {
		if *body.Seconds > sim.MaxTime.Sub(r.p.Eng.Clock().Now()).Seconds() {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "seconds", Reason: "would move the clock past " + sim.FormatTime(sim.MaxTime)}})
		}
		d = time.Duration(*body.Seconds * float64(time.Second))
	} else {
		var err error
		if d, err = time.ParseDuration(body.Duration); err != nil {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "duration", Reason: err.Error()}})
		}
	}
	if _, err := r.p.Eng.Advance(d); err != nil {
		return 0, nil, err
	}
	return r.clock()
}

type setClockInput struct {
	Body struct {
		Time time.Time `json:"time"`
	} `body:""`
}

func setClock(r *request, in setClockInput) (int, any, error) {
	if err := r.p.Eng.SetTime(in.Body.Time); err != nil {
		return 0, nil, err
	}
	return r.clock()
}

func resyncClock(r *request, _ none) (int, any, error) {
	if _, err := r.p.Eng.ResyncClock(); err != nil {
		return 0, nil, err
	}
	return r.clock()
}

type clockModeInput struct {
	Body struct {
		Mode string `json:"mode"`
	} `body:""`
}

func clockMode(r *request, in clockModeInput) (int, any, error) {
	if err := r.p.Eng.SetClockMode(sim.ClockMode(in.Body.Mode)); err != nil {
		return 0, nil, err
	}
	return r.clock()
}

// reset puts the whole simulation back to its fixtures.
func reset(r *request, _ none) (int, any, error) {
	if err := r.p.Reset(); err != nil {
		return 0, nil, err
	}
	return r.clock()
}
