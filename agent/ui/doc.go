// Package ui is Stratus's web UI: a single-page application of plain
// HTML, CSS and JavaScript modules (no build step, nothing fetched from
// the internet at run time) embedded in the binary and served by every
// agent at /ui.
//
// The UI is a client of the agent's own HTTP APIs, in the browser: it
// logs in with the identity API (Keystone v3, a project-scoped token kept
// in sessionStorage), reads and acts on instances through the Compute API
// (/compute/v2.1), so Nova's project policy decides what a user sees and
// may do, and reads hosts, evaluations and cluster health from the native
// /v1 API for admins. It follows changes live with blocking queries.
//
// The package owns the embedded assets and the handler that serves them.
// It must not import anything of Stratus's: it knows the APIs only as a
// browser does, over HTTP.
package ui
