package ops

// SwapHandler replaces the handler of an operation for a test and returns
// what puts it back.
func SwapHandler(op string, h func(*Call) (int, any, error)) (restore func()) {
	old := handlers[op]
	handlers[op] = h
	return func() { handlers[op] = old }
}

// Handler is the handler of an operation.
func Handler(op string) func(*Call) (int, any, error) { return handlers[op] }

// ListPageFacts are a list page's bytes and the facts its handler returned
// beside them; ok is false for another body.
func ListPageFacts(body any) (raw []byte, facts ListFacts, ok bool) {
	p, ok := body.(listPage)
	return p.RawJSON, ListFacts{IDs: p.ids, More: p.more}, ok
}
