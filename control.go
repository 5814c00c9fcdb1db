package mediamock

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/mediamock/mediamock/sim"
)

// ControlPath is the reserved prefix of the control API. It lies outside the
// service's base path, so it can never collide with the service's own paths.
const ControlPath = "/_mock"

// ctlFunc serves one control operation.
type ctlFunc func(s *Server, r *http.Request, vars map[string]string) (int, any, error)

type ctlRoute struct {
	method, path, op string
	h                ctlFunc
}

func controlRoutes() []ctlRoute {
	return []ctlRoute{
		{"GET", "/health", "getHealth", (*Server).ctlHealth},
		{"GET", "/openapi.json", "getControlDocument", nil},
		{"GET", "/clock", "getClock", (*Server).ctlClock},
		{"POST", "/clock/advance", "advanceClock", (*Server).ctlAdvance},
		{"POST", "/clock/set", "setClock", (*Server).ctlSetClock},
		{"PUT", "/clock/mode", "setClockMode", (*Server).ctlClockMode},
		{"GET", "/faults", "getFaults", (*Server).ctlFaults},
		{"DELETE", "/faults", "clearFaults", (*Server).ctlClearFaults},
		{"POST", "/faults/fail-next", "failNext", (*Server).ctlFailNext},
		{"PUT", "/faults/failure-rate", "setFailureRate", (*Server).ctlFailureRate},
		{"PUT", "/faults/platforms/{platform}", "failPlatform", ctlPlatform(true)},
		{"DELETE", "/faults/platforms/{platform}", "unfailPlatform", ctlPlatform(false)},
		{"PUT", "/faults/latency/{operation}", "setLatency", ctlLatency(true)},
		{"DELETE", "/faults/latency/{operation}", "clearLatency", ctlLatency(false)},
		{"POST", "/faults/responses", "forceResponses", (*Server).ctlForce},
		{"POST", "/assets/{id}/{action}", "controlAsset", (*Server).ctlAsset},
		{"POST", "/encore/creations/{id}/{action}", "controlEncore", (*Server).ctlEncore},
		{"POST", "/publications/{id}/cancel", "cancelPublication", (*Server).ctlCancel},
		{"GET", "/workspaces", "listWorkspaces", (*Server).ctlWorkspaces},
		{"POST", "/workspaces", "addWorkspace", (*Server).ctlAddWorkspace},
		{"POST", "/workspaces/{id}/tokens", "addToken", (*Server).ctlAddToken},
		{"POST", "/workspaces/{id}/credits", "grantCredits", (*Server).ctlGrant},
		{"GET", "/workspaces/{id}/ledger", "getLedger", (*Server).ctlLedger},
		{"GET", "/journal", "getJournal", (*Server).ctlJournal},
		{"DELETE", "/journal", "clearJournal", (*Server).ctlClearJournal},
		{"GET", "/coverage", "getCoverage", (*Server).ctlCoverage},
		{"DELETE", "/coverage", "resetCoverage", (*Server).ctlResetCoverage},
		{"POST", "/reset", "reset", (*Server).ctlReset},
		{"GET", "/snapshot", "getSnapshot", nil},
		{"PUT", "/snapshot", "restoreSnapshot", nil},
	}
}

func mountControl(router *mux.Router, c *contract) {
	ctl := router.PathPrefix(ControlPath).Subrouter()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range controlRoutes() {
		if c.routes[rt.op] == nil {
			panic("control route " + rt.op + " is not in control.json")
		}
		var h http.HandlerFunc
		switch rt.op {
		case "getControlDocument":
			h = func(w http.ResponseWriter, r *http.Request) { serveBytes(w, r, ControlDocument) }
		case "getSnapshot":
			h = func(w http.ResponseWriter, r *http.Request) { w.(*respWriter).s.ctlSnapshot(w, r) }
		case "restoreSnapshot":
			// Streamed to a file as it comes: the validator would buffer it.
			h = func(w http.ResponseWriter, r *http.Request) {
				rw := w.(*respWriter)
				if status, body, err := rw.s.ctlRestore(r, nil); err != nil {
					writeError(rw, err)
				} else {
					writeJSON(rw, status, body)
				}
			}
		default:
			h = controlHandler(c, rt)
		}
		if rt.op != "getHealth" {
			h = controlAuth(h)
		}
		ctl.HandleFunc(rt.path, h).Methods(rt.method)
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for _, p := range paths {
		methodNotAllowed(ctl, p, allowed[p])
	}
}

// controlAuth checks the control token, when the server has one.
func controlAuth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if tok := w.(*respWriter).s.opts.ControlToken; tok != "" {
			got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
				writeError(w.(*respWriter), &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_control_token",
					Message: "The control API needs Authorization: Bearer <control token>."})
				return
			}
		}
		next(w, r)
	}
}

// control validates a control request against control.json and runs it.
func controlHandler(c *contract, rt ctlRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rw := w.(*respWriter)
		vars := mux.Vars(r)
		if err := c.validateRequest(r, rt.op, vars, r.URL.Query()); err != nil {
			writeError(rw, err)
			return
		}
		status, body, err := rt.h(rw.s, r, vars)
		if err != nil {
			writeError(rw, err)
			return
		}
		writeJSON(rw, status, body)
	}
}

func decodeInto(r *http.Request, v any) error {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	return decodeJSON(r.Body, v)
}

func varID(vars map[string]string) uint64 {
	n, _ := strconv.ParseUint(vars["id"], 10, 64)
	return n
}

// --- health and clock

type healthJSON struct {
	Status string `json:"status"`
	Clock  string `json:"clock"`
	Now    string `json:"now"`
}

// ctlHealth answers 200 while the server serves, 503 once it is stopping.
func (s *Server) ctlHealth(*http.Request, map[string]string) (int, any, error) {
	status, code := "ok", http.StatusOK
	if s.stop.Err() != nil {
		status, code = "stopping", http.StatusServiceUnavailable
	}
	clock := s.eng.Clock()
	return code, healthJSON{Status: status, Clock: string(clock.Mode()), Now: sim.FormatTime(clock.Now())}, nil
}

type clockJSON struct {
	Now         string `json:"now"`
	Mode        string `json:"mode"`
	NextEventAt string `json:"next_event_at,omitempty"`
}

func (s *Server) clockView() clockJSON {
	c := s.eng.Clock()
	// Sub-second precision: moving the clock to next_event_at fires the event.
	out := clockJSON{Now: sim.FormatTimeExact(c.Now()), Mode: string(c.Mode())}
	if next, ok, _ := s.eng.NextDue(); ok {
		out.NextEventAt = sim.FormatTimeExact(next)
	}
	return out
}

func (s *Server) ctlClock(*http.Request, map[string]string) (int, any, error) {
	return http.StatusOK, s.clockView(), nil
}

func (s *Server) ctlAdvance(r *http.Request, _ map[string]string) (int, any, error) {
	var body struct {
		Seconds  *float64 `json:"seconds"`
		Duration string   `json:"duration"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	d := time.Duration(0)
	if body.Seconds != nil {
		if *body.Seconds > sim.MaxTime.Sub(s.Now()).Seconds() {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "seconds", Reason: "would move the clock past " + sim.FormatTime(sim.MaxTime)}})
		}
		d = time.Duration(*body.Seconds * float64(time.Second))
	} else {
		var err error
		if d, err = time.ParseDuration(body.Duration); err != nil {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "duration", Reason: err.Error()}})
		}
	}
	if _, err := s.eng.Advance(d); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.clockView(), nil
}

func (s *Server) ctlSetClock(r *http.Request, _ map[string]string) (int, any, error) {
	var body struct {
		Time time.Time `json:"time"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	if err := s.SetTime(body.Time); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.clockView(), nil
}

func (s *Server) ctlClockMode(r *http.Request, _ map[string]string) (int, any, error) {
	var body struct {
		Mode string `json:"mode"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	if err := s.SetClockMode(sim.ClockMode(body.Mode)); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.clockView(), nil
}

// --- faults

// httpFaults are the faults the HTTP layer injects: added latency and
// forced error responses, per operation ("*" for every one).
type httpFaults struct {
	mu      sync.Mutex
	latency map[string]time.Duration
	forced  []ForcedResponse
}

// ForcedResponse answers the next Remaining requests of Operation with Status.
type ForcedResponse struct {
	Operation string `json:"operation"`
	Status    int    `json:"status"`
	Remaining int    `json:"remaining"`
}

// take returns the status to force on a request of op, if any.
func (f *httpFaults) take(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.forced {
		fr := &f.forced[i]
		if fr.Operation == op || fr.Operation == "*" {
			status := fr.Status
			if fr.Remaining--; fr.Remaining <= 0 {
				f.forced = slices.Delete(f.forced, i, i+1)
			}
			return status
		}
	}
	return 0
}

func (f *httpFaults) delay(op string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.latency[op]; ok {
		return d
	}
	return f.latency["*"]
}

func (f *httpFaults) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency, f.forced = nil, nil
}

type faultsJSON struct {
	sim.FaultsView
	LatencyMS map[string]int64 `json:"latency_ms"`
	Forced    []ForcedResponse `json:"forced_responses"`
}

// Faults returns every injected fault.
func (s *Server) Faults() (faultsJSON, error) {
	v, err := s.eng.Faults()
	if err != nil {
		return faultsJSON{}, err
	}
	if v.FailNext == nil {
		v.FailNext = []sim.FailRule{}
	}
	if v.FailPlatforms == nil {
		v.FailPlatforms = []string{}
	}
	out := faultsJSON{FaultsView: v, LatencyMS: map[string]int64{}, Forced: []ForcedResponse{}}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	for op, d := range s.faults.latency {
		out.LatencyMS[op] = d.Milliseconds()
	}
	out.Forced = append(out.Forced, s.faults.forced...)
	return out, nil
}

func (s *Server) faultsResponse() (int, any, error) {
	f, err := s.Faults()
	return http.StatusOK, f, err
}

func (s *Server) ctlFaults(*http.Request, map[string]string) (int, any, error) {
	return s.faultsResponse()
}

func (s *Server) ctlClearFaults(*http.Request, map[string]string) (int, any, error) {
	if err := s.ClearFaults(); err != nil {
		return 0, nil, err
	}
	return s.faultsResponse()
}

func (s *Server) ctlFailNext(r *http.Request, _ map[string]string) (int, any, error) {
	var rule sim.FailRule
	if err := decodeInto(r, &rule); err != nil {
		return 0, nil, err
	}
	if err := s.eng.FailNext(rule); err != nil {
		return 0, nil, err
	}
	return s.faultsResponse()
}

func (s *Server) ctlFailureRate(r *http.Request, _ map[string]string) (int, any, error) {
	var body struct {
		Rate *float64 `json:"rate"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	if err := s.eng.SetFailureRate(body.Rate); err != nil {
		return 0, nil, err
	}
	return s.faultsResponse()
}

func ctlPlatform(fail bool) ctlFunc {
	return func(s *Server, _ *http.Request, vars map[string]string) (int, any, error) {
		if err := s.eng.FailPlatform(vars["platform"], fail); err != nil {
			return 0, nil, err
		}
		return s.faultsResponse()
	}
}

func ctlLatency(set bool) ctlFunc {
	return func(s *Server, r *http.Request, vars map[string]string) (int, any, error) {
		var body struct {
			MS int64 `json:"ms"`
		}
		if set {
			if err := decodeInto(r, &body); err != nil {
				return 0, nil, err
			}
		}
		s.SetLatency(vars["operation"], time.Duration(body.MS)*time.Millisecond)
		return s.faultsResponse()
	}
}

func (s *Server) ctlForce(r *http.Request, _ map[string]string) (int, any, error) {
	var body struct {
		Operation string `json:"operation"`
		Status    int    `json:"status"`
		Count     int    `json:"count"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	if err := s.ForceResponses(body.Operation, body.Status, max(1, body.Count)); err != nil {
		return 0, nil, err
	}
	return s.faultsResponse()
}

// --- jobs

func (s *Server) ctlAsset(r *http.Request, vars map[string]string) (int, any, error) {
	var body struct {
		Code string `json:"code"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	g, err := s.eng.ControlAsset(varID(vars), sim.JobAction(vars["action"]), body.Code)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.viewCall(r).generation(g), nil
}

func (s *Server) ctlEncore(r *http.Request, vars map[string]string) (int, any, error) {
	var body struct {
		Code string `json:"code"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	v, err := s.eng.ControlEncore(varID(vars), sim.JobAction(vars["action"]), body.Code)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.viewCall(r).encore(v), nil
}

func (s *Server) ctlCancel(_ *http.Request, vars map[string]string) (int, any, error) {
	p, err := s.eng.CancelPublicationAny(varID(vars))
	return http.StatusOK, publicationOf(p), err
}

// viewCall lets control handlers render resources like the API does.
func (s *Server) viewCall(r *http.Request) *call { return &call{r: r, s: s} }

// --- workspaces

type workspaceJSON struct {
	ID                uint64 `json:"id"`
	Name              string `json:"name"`
	Plan              string `json:"plan"`
	CreditsBalance    int64  `json:"credits_balance"`
	RateLimit         int    `json:"rate_limit_per_minute"`
	PublishingAllowed bool   `json:"publishing_allowed"`
}

func (s *Server) ctlWorkspaces(*http.Request, map[string]string) (int, any, error) {
	list, err := s.eng.Workspaces()
	out := make([]workspaceJSON, 0, len(list))
	for _, w := range list {
		out = append(out, workspaceJSON{ID: w.ID, Name: w.Name, Plan: w.Plan, CreditsBalance: w.Balance, RateLimit: w.RateLimit, PublishingAllowed: w.PublishingAllowed})
	}
	return http.StatusOK, out, err
}

func (s *Server) ctlAddWorkspace(r *http.Request, _ map[string]string) (int, any, error) {
	var spec sim.WorkspaceSpec
	if err := decodeInto(r, &spec); err != nil {
		return 0, nil, err
	}
	ws, err := s.eng.AddWorkspace(spec)
	return http.StatusCreated, ws, err
}

func (s *Server) ctlAddToken(r *http.Request, vars map[string]string) (int, any, error) {
	var spec sim.TokenSpec
	if err := decodeInto(r, &spec); err != nil {
		return 0, nil, err
	}
	tok, err := s.eng.AddToken(varID(vars), spec)
	return http.StatusCreated, tok, err
}

type balanceJSON struct {
	WorkspaceID uint64 `json:"workspace_id"`
	Balance     int64  `json:"credits_balance"`
}

func (s *Server) ctlGrant(r *http.Request, vars map[string]string) (int, any, error) {
	var body struct {
		Amount int64  `json:"amount"`
		Note   string `json:"note"`
	}
	if err := decodeInto(r, &body); err != nil {
		return 0, nil, err
	}
	bal, err := s.eng.GrantCredits(varID(vars), body.Amount, body.Note)
	return http.StatusOK, balanceJSON{WorkspaceID: varID(vars), Balance: bal}, err
}

type ledgerJSON struct {
	WorkspaceID uint64            `json:"workspace_id"`
	Balance     int64             `json:"credits_balance"`
	Entries     []sim.LedgerEntry `json:"entries"`
}

func (s *Server) ctlLedger(_ *http.Request, vars map[string]string) (int, any, error) {
	id := varID(vars)
	bal, err := s.eng.Balance(id)
	if err != nil {
		return 0, nil, err
	}
	entries, err := s.eng.Ledger(id)
	if entries == nil {
		entries = []sim.LedgerEntry{}
	}
	return http.StatusOK, ledgerJSON{WorkspaceID: id, Balance: bal, Entries: entries}, err
}

// --- journal and coverage

type journalJSON struct {
	Size     int            `json:"size"`
	BodyCap  int            `json:"body_cap_bytes"`
	Recorded int64          `json:"recorded"`
	Entries  []JournalEntry `json:"entries"`
}

func (s *Server) journalView(f JournalFilter) journalJSON {
	out := journalJSON{Entries: s.Journal(f)}
	if s.journal != nil {
		s.journal.mu.Lock()
		out.Size, out.BodyCap, out.Recorded = len(s.journal.slots), s.journal.bodyCap, s.journal.recorded
		s.journal.mu.Unlock()
	}
	return out
}

func (s *Server) ctlJournal(r *http.Request, _ map[string]string) (int, any, error) {
	q := r.URL.Query()
	f := JournalFilter{Method: q.Get("method"), PathPrefix: q.Get("path"), Operation: q.Get("operation"), Limit: 100}
	f.Status, _ = strconv.Atoi(q.Get("status"))
	ws, _ := strconv.ParseUint(q.Get("workspace_id"), 10, 64)
	f.WorkspaceID = ws
	if l, err := strconv.Atoi(q.Get("limit")); err == nil {
		f.Limit = l
	}
	return http.StatusOK, s.journalView(f), nil
}

func (s *Server) ctlClearJournal(*http.Request, map[string]string) (int, any, error) {
	s.ClearJournal()
	return http.StatusOK, s.journalView(JournalFilter{}), nil
}

func (s *Server) ctlCoverage(*http.Request, map[string]string) (int, any, error) {
	return http.StatusOK, s.Coverage(), nil
}

func (s *Server) ctlResetCoverage(*http.Request, map[string]string) (int, any, error) {
	s.ResetCoverage()
	return http.StatusOK, s.Coverage(), nil
}

// --- state

func (s *Server) ctlReset(*http.Request, map[string]string) (int, any, error) {
	if err := s.Reset(); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.clockView(), nil
}

func (s *Server) ctlSnapshot(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if _, err := s.eng.Snapshot(&buf); err != nil {
		writeError(w.(*respWriter), err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="mediamock-snapshot.db"`)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

func (s *Server) ctlRestore(r *http.Request, _ map[string]string) (int, any, error) {
	body := &readErr{r: r.Body}
	if err := s.eng.Restore(body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(body.err, &mbe) {
			return 0, nil, tooLarge(mbe.Limit)
		}
		return 0, nil, err
	}
	return http.StatusOK, s.clockView(), nil
}

// readErr remembers the error its reader returned.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// --- the Go side of the same controls

// SetTime moves the simulated clock to t (never backwards) and applies
// everything due on the way.
func (s *Server) SetTime(t time.Time) error { return s.eng.SetTime(t) }

// SetClockMode switches the clock between real, manual and virtual.
func (s *Server) SetClockMode(m sim.ClockMode) error {
	if err := s.eng.Clock().SetMode(m); err != nil {
		return &sim.Error{Kind: sim.EINVALID, Code: "validation_failed", Message: err.Error()}
	}
	return nil
}

// FailNext makes the next rule.Count matching jobs fail.
func (s *Server) FailNext(rule sim.FailRule) error { return s.eng.FailNext(rule) }

// SetFailureRate overrides every model's failure rate (nil: the catalog's).
func (s *Server) SetFailureRate(rate *float64) error { return s.eng.SetFailureRate(rate) }

// FailPlatform makes deliveries to a platform ("all" for every one) fail
// (or succeed again).
func (s *Server) FailPlatform(platform string, fail bool) error {
	return s.eng.FailPlatform(platform, fail)
}

// FailAsset fails the generation of an asset now, refunding its credits.
func (s *Server) FailAsset(id uint64, code string) error {
	_, err := s.eng.ControlAsset(id, sim.JobFail, code)
	return err
}

// StickAsset makes the generation of an asset never move again.
func (s *Server) StickAsset(id uint64) error {
	_, err := s.eng.ControlAsset(id, sim.JobStick, "")
	return err
}

// CompleteAsset completes the generation of an asset now.
func (s *Server) CompleteAsset(id uint64) error {
	_, err := s.eng.ControlAsset(id, sim.JobComplete, "")
	return err
}

// FailEncore fails an Encore creation now, refunding its credits.
func (s *Server) FailEncore(id uint64, code string) error {
	_, err := s.eng.ControlEncore(id, sim.JobFail, code)
	return err
}

// StickEncore makes an Encore creation never move again.
func (s *Server) StickEncore(id uint64) error {
	_, err := s.eng.ControlEncore(id, sim.JobStick, "")
	return err
}

// CancelPublication cancels what a publication has not delivered yet.
func (s *Server) CancelPublication(id uint64) error {
	_, err := s.eng.CancelPublicationAny(id)
	return err
}

// SetLatency adds wall-clock latency to an operation ("*" for every one);
// zero removes it.
func (s *Server) SetLatency(operation string, d time.Duration) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.latency == nil {
		s.faults.latency = map[string]time.Duration{}
	}
	if d <= 0 {
		delete(s.faults.latency, operation)
		return
	}
	s.faults.latency[operation] = d
}

// ForceResponses answers the next count requests of an operation ("*" for
// any) with status 500, 503 or 429, after authentication and the rate limit.
func (s *Server) ForceResponses(operation string, status, count int) error {
	if status != http.StatusInternalServerError && status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests {
		return sim.InvalidError([]sim.Violation{{In: "body", Field: "status", Reason: "must be 429, 500 or 503", Allowed: []any{429, 500, 503}}})
	}
	if operation != "*" && s.c.routes[operation] == nil {
		return sim.InvalidError([]sim.Violation{{In: "body", Field: "operation", Reason: fmt.Sprintf("unknown operation %q", operation)}})
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.forced = append(s.faults.forced, ForcedResponse{Operation: operation, Status: status, Remaining: count})
	return nil
}

// ClearFaults removes every injected fault, in the engine and in HTTP.
func (s *Server) ClearFaults() error {
	s.faults.clear()
	return s.eng.ClearFaults()
}

// Ledger is a workspace's credit ledger, oldest first.
func (s *Server) Ledger(workspaceID uint64) ([]sim.LedgerEntry, error) {
	return s.eng.Ledger(workspaceID)
}

// AddWorkspace creates a workspace with credits and an API key.
func (s *Server) AddWorkspace(spec sim.WorkspaceSpec) (sim.NewWorkspace, error) {
	return s.eng.AddWorkspace(spec)
}

// AddToken adds an API key or access token to a workspace.
func (s *Server) AddToken(workspaceID uint64, spec sim.TokenSpec) (sim.Token, error) {
	return s.eng.AddToken(workspaceID, spec)
}

// GrantCredits adds credits to a workspace (negative: removes them).
func (s *Server) GrantCredits(workspaceID uint64, amount int64) (int64, error) {
	return s.eng.GrantCredits(workspaceID, amount, "")
}

// Reset puts the whole simulation back to its fixtures: state, clock,
// journal, coverage and faults.
func (s *Server) Reset() error {
	if err := s.eng.Reset(s.start); err != nil {
		return err
	}
	s.faults.clear()
	s.ClearJournal()
	s.ResetCoverage()
	return nil
}

// forcedError is the error of a forced response.
func forcedError(status int, d sim.RateDecision) *sim.Error {
	switch status {
	case http.StatusTooManyRequests:
		return &sim.Error{Kind: sim.ERATELIMIT, Code: "rate_limited", Message: "Rate limit reached (forced by the control API).",
			Details: map[string]any{"limit": d.Limit, "retry_after_seconds": int(d.RetryAfter / time.Second)}}
	case http.StatusServiceUnavailable:
		return &sim.Error{Kind: sim.EUNAVAILABLE, Code: "service_unavailable", Message: "The service is temporarily unavailable; retry later (forced by the control API)."}
	}
	return &sim.Error{Kind: sim.EINTERNAL, Code: "internal_error", Message: "Internal server error (forced by the control API)."}
}

// sleep waits d of wall time, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
