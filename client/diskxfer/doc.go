// Package diskxfer carries an instance's disks from the host a resize or
// cold migration moves it off to the host it moves to, agent to agent
// over HTTP, never through the servers: the source's agent serves a
// manifest (each disk's role, format, size, SHA-256 and the image it is
// an overlay on) and each disk's bytes with range requests; the
// destination's agent fetches them into a staging directory, resuming a
// partial file where it stopped, checks every digest and only then
// hands the files to its driver. Between hosts sharing a pool, the
// destination takes a disk from that pool instead, once it has checked
// the file there is the one the manifest describes (shared.go).
//
// A live migration's source asks its destination's agent the other way
// round to prepare (fetch the instance's image into its cache) before
// the migration starts (prepare.go).
//
// Access needs the move's token, which the servers give both ends
// through their allocations (structs.DiskSource, DiskExportToken); the
// server side is told by a Lookup whether a token opens an allocation's
// disks.
//
// It must never write anything but the staging directory it is given,
// never send a disk whose instance is running (Lookup refuses), and
// never hand over a file whose digest does not match the manifest.
package diskxfer
