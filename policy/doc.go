// Package policy owns who may call what: the access levels every HTTP
// interface (the native /v1 API, the Compute API, the web UI's calls)
// assigns to its routes, and the one check that decides whether a
// caller's roles reach a level.
//
// It must not know tokens, HTTP or RPC: callers verify a credential
// first and hand over the resulting Subject. Each interface keeps its
// route table beside its handlers, with an explicit level on every
// route; the tables are listed, for review in one place, by
// website/security.md.
package policy
