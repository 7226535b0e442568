// Package service is what is not yet a slice of its own: ingest (a
// webhook's key, signature and body, normalized and committed with its
// grouping in one transaction), recorded changes, data-source connections,
// grouping, analytics, outcomes (grades, export and replay) and health.
// Handlers bind input, call one method here and map its error (errcode).
// It starts and resolves incidents through the investigation slice.
package service
