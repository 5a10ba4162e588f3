// Package hashcheck holds the cross-language check of traceforge's ids and
// hashes: hashcheck.mjs recomputes every request key, id, lineage, record,
// file and manifest hash of a snapshot folder with the `canonicalize` npm
// package (RFC 8785) and node:crypto. The Go tests run it on sets built by
// the Go code; Node.js and `npm ci` in this folder are required.
package hashcheck
