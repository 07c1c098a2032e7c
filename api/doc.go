// Package api is the Go client of Stratus's native HTTP API (/v1/...), the
// API that cloudctl, UI tests and users' programs speak.
//
// It owns the request plumbing (addresses, tokens, blocking-query
// parameters, response metadata headers, error decoding) and its own copies
// of the wire types. The JSON is the contract: this package must not import
// any other package of this module, so that programs can depend on it
// without pulling in the server, and so that a change to internal types
// cannot silently change what clients see.
//
// A typical use:
//
//	client, err := api.NewClient(api.DefaultConfig())
//	if err != nil { ... }
//	flavors, meta, err := client.Flavors().List(nil)
//
// Reads return a *QueryMeta (the state index the answer reflects and
// whether a leader was known); pass LastIndex back as QueryOptions.WaitIndex
// to block until something changes. Writes return a *WriteMeta. Non-2xx
// answers are returned as *Error.
package api
