// Package cinder serves the Block Storage API v3 (Cinder's) under
// /volume: the version documents at /volume/ and /volume/v3/, and
// volumes, snapshots, attachments (3.27+), volume types, quota sets,
// limits and availability zones at /volume/v3/{project_id}/… (or without the project id, as
// microversion 3.67 allows), with Cinder's microversions
// (OpenStack-API-Version: volume 3.x), bodies and error shapes.
//
// The package holds no state: every call becomes an RPC to the
// servers' Volume endpoint carrying the caller's token, and the servers
// decide who may do what. It must not import the servers, the FSM or
// the agents that keep the volumes; it never touches a volume's data.
package cinder
