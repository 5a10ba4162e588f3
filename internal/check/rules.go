// Package check is the one check pipeline — schema, version, hashes, ids,
// determinism policy, lineage and the secret scan — that record, verify,
// migrate and the Go package all call. Nothing else re-implements a rule.
package check

// Rule names (stable: they appear in JSON reports and the docs).
const (
	RuleJSON            = "json"
	RuleSchema          = "schema"
	RuleVersion         = "version"
	RuleRecordHash      = "record-hash"
	RuleFileHash        = "file-hash"
	RuleManifestHash    = "manifest-hash"
	RuleManifestMissing = "manifest-missing"
	RuleManifestEntry   = "manifest-entry"
	RuleMissingFile     = "missing-file"
	RuleNotInManifest   = "not-in-manifest"
	RuleID              = "id"
	RuleRekey           = "rekey"
	RuleCollision       = "id-collision"
	RuleDeterminism     = "determinism"
	RuleSecret          = "secret"
	RuleLineage         = "lineage"
	RuleSource          = "source"
	RuleUnsafeFile      = "unsafe-file"
	RuleUnexpectedFile  = "unexpected-file"
	RuleMigration       = "unfinished-migration"
	RulePolicy          = "policy"
)
