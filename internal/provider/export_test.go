package provider

// Exported for the external tests (package provider_test), which reach the
// wire formats through the registry.
var Canonical = canonical

const MaxNotes = maxNotes
