package controlapi

// NamedSnapshot is a snapshot saved on the server under a name, as GET
// /_mock/snapshots lists it: the whole state (the server's scope) or one
// sandbox's, kept beside the state file across restarts.
type NamedSnapshot struct {
	// Object is "snapshot".
	Object string `json:"object"`
	// Name names it in its scope (lower-case letters, digits, dots,
	// dashes and underscores).
	Name string `json:"name"`
	// Scope is "global" (the whole state) or the sandbox's ("sandbox
	// sbx_1_4f0c9a2e").
	Scope string `json:"scope"`
	// SandboxID is the sandbox it restores into, for a sandbox's.
	SandboxID string `json:"sandbox_id,omitempty"`
	// Bytes is its size.
	Bytes int64 `json:"bytes"`
	// SavedAt is when it was saved, on the wall clock.
	SavedAt string `json:"saved_at"`
	// SimTime is the simulated clock when it was saved.
	SimTime string `json:"sim_time"`
	// Description is what its saver said of it.
	Description string `json:"description,omitempty"`
}
