package mediamock

// WithoutMetrics turns a server's metrics off, for the benchmarks that
// show what counting a request costs (every server counts).
func WithoutMetrics(s *Server) { s.env.Metrics = nil }

// Commits is the count of the engine's commits, for the benchmarks that
// report the creations per commit.
func Commits(s *Server) uint64 { return s.eng.Commits() }
