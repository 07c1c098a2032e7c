// Package agent is the Stratus daemon behind `cloudctl agent`: it loads
// the configuration (HCL file and flags), runs a server and/or joins the
// gossip pool as a client, runs the hypervisor agents (package client)
// of the hosts it drives, and wires and mounts the HTTP APIs on the
// agent's port — the native /v1 API (agent/native), Compute, Identity,
// Image, Network, S3, the console proxies and the web UI — behind the
// port's request limits, plus the metadata service, Prometheus metrics
// and dev mode's seeding.
//
// It owns the wiring only: the transports to the servers (in process or
// over the connection pool, with the credential each call carries), the
// streams of image and object data, and each API's dependencies. It must
// not answer an API's requests itself (each API package does), and must
// not hold authoritative state: every read and write goes to a server
// over RPC (in process when the agent is itself a server).
package agent
