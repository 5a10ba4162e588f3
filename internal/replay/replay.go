// Package replay answers LLM calls from a checked snapshot set: it indexes
// a set by request key (Index) and writes a snapshot's recorded response as
// JSON or as the wire format's stream (Entries.Respond). It is shared by
// `traceforge verify` (the replay server), `traceforge record
// --only-missing` (Responder: hits are served from the set without
// contacting the upstream; the CLI hands it to record) and the Go
// transport. Requests are parsed by the wire layer (registry.Parse).
//
// It never touches the network: callers hand it the in-memory set
// validated by check.CheckSet. What it keeps beside each snapshot (the
// encoded reply, a compact snapshot's fingerprint) lives in an Entries the
// caller owns — no field of check's types, no process-global cache — and
// only a compact snapshot's file is read again (Entries.FullRecord).
package replay
