package mediamock

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mediamock/mediamock/sim"
)

// ControlPath is the reserved prefix of the control API. It lies outside the
// service's base path, so it can never collide with the service's own paths.
const ControlPath = "/_mock"

func (s *Server) mountControl(router *mux.Router) {
	ctl := router.PathPrefix(ControlPath).Subrouter()
	ctl.HandleFunc("/health", s.health).Methods(http.MethodGet, http.MethodHead)
}

type healthJSON struct {
	Status string `json:"status"`
	Clock  string `json:"clock"`
	Now    string `json:"now"`
}

// health answers 200 while the server serves, 503 once it is stopping.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	status, code := "ok", http.StatusOK
	if s.stop.Err() != nil {
		status, code = "stopping", http.StatusServiceUnavailable
	}
	clock := s.eng.Clock()
	writeJSON(w, code, healthJSON{Status: status, Clock: string(clock.Mode()), Now: sim.FormatTime(clock.Now())})
}
