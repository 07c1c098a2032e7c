// Package agent is the Stratus daemon behind `cloudctl agent`: it loads
// the configuration (HCL file and flags), runs a server and/or joins the
// gossip pool as a client, and serves the HTTP API (native /v1; Nova,
// identity, images, networking and the UI as they land) plus Prometheus
// metrics.
//
// It must not hold authoritative state: every read and write goes to a
// server over RPC (in process when the agent is itself a server).
package agent
