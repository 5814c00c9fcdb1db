package mediamock

// WithoutMetrics turns a server's metrics off, for the benchmarks that
// show what counting a request costs (every server counts).
func WithoutMetrics(s *Server) { s.env.Metrics = nil }
