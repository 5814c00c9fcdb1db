// Package sim is the simulation engine behind the mock: the state of every
// workspace (credits, the library, jobs, publications, tokens), the model
// catalog's rules, rate limits, faults and the lifecycles of generations,
// Encore creations and publications, kept in one bbolt file. The fronts
// (REST, control API, MCP, dashboard) turn their requests into calls on an
// Engine and its errors (*Error, with a Kind) into their own.
//
// What holds, and what tests may rely on:
//
//   - No network. The engine never imports net/http; image URLs are
//     resolved through the ImageResolver it is given.
//   - One clock. Time comes from the Clock in Config and nothing else: the
//     engine never reads the wall clock for the simulation nor sleeps. In
//     manual and virtual modes time moves only when told (Advance, SetTime,
//     or a long poll in virtual mode); in real mode Drive waits for the
//     next due event and applies it on time.
//   - One seeded randomness. Every random choice derives from Config.Seed
//     and the id of the entity it is for (Rand, DeriveSeed), so the same
//     seed and the same calls give the same state, byte for byte, whatever
//     the scheduling of goroutines. Secrets are the exception: every
//     credential the engine makes up comes from crypto/rand and is kept in
//     the state (secrets are random; everything else is seeded: see
//     secrets.go).
//   - One writer. Every write is a function handed to a single writer
//     goroutine, which commits the writes waiting at once in one
//     transaction (group commit: one commit, and one fsync when Durable,
//     for many calls); a write that fails or panics is rolled back alone.
//     Reads run in read transactions, concurrently. See writer.go.
//   - Due events in order. Work due later (a job leaving the queue or
//     finishing, a scheduled publication, a delivery) is stored with its
//     due time and applied, in order of due time and each at its own time,
//     before any write or read that comes after it: advancing the clock by
//     an hour gives the state of living through the hour. See due.go.
//
// A sketch of its use, on a manual clock:
//
//	world, err := fixtures.Load("", 0) // the embedded default world
//	if err != nil { ... }
//	e, err := sim.Open(sim.Config{Path: "state.db", World: world, Seed: 42,
//		Clock: sim.NewClock(sim.ClockManual, sim.DefaultEpoch, nil)})
//	if err != nil { ... }
//	defer e.Close()
//
//	p, _ := e.Authenticate("mk_test_all_scopes")
//	g, err := e.CreateGeneration(ctx, p, sim.GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a red fox"})
//	e.Advance(time.Minute) // the job leaves the queue, processes and completes
//	g2, err := e.Generation(ctx, p, g.Assets[0].ID, 0)
//	// g2.Status == sim.StatusCompleted
//
// Files, by what a reader looks for: engine.go opens and closes the
// engine; writer.go makes the engine the owner of the group-commit writer,
// read.go the reads, tx.go the transaction both use; due.go the due events
// and the clock's moves; layout.go and codec.go the buckets, keys and
// record encodings; then one file per resource (assets.go, generation.go,
// encore.go, publications.go, uploads.go, workspaces.go, ...).
// snapshot.go takes and restores snapshots, snapcheck.go checks every
// record of an uploaded one; bulk.go writes a whole state (seeding, reset,
// restore).
//
// The state file itself is package internal/store's: opening it, the
// group-commit writer, bulk writes in bounded transactions behind their
// marker, an uploaded snapshot's pages and bbolt's own check, the mapped
// pages released. The engine decides what lies in the file (the layout)
// and reads and writes it through *bolt.Tx; the store never knows a
// workspace or an asset.
package sim
