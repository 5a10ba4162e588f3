package provider

import "io"

// Exported for the external tests (package provider_test), which reach the
// wire formats through the registry.
var Canonical = canonical

const MaxNotes = maxNotes

// EmitterFor is an Emitter writing to w, for tests.
func EmitterFor(w io.Writer) *Emitter { return &Emitter{w: w} }
