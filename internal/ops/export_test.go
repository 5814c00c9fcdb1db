package ops

// SwapHandler replaces the handler of an operation for a test and returns
// what puts it back.
func SwapHandler(op string, h func(*Call) (int, any, error)) (restore func()) {
	old := handlers[op]
	handlers[op] = h
	return func() { handlers[op] = old }
}
