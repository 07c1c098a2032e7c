// Package glance serves OpenStack's Image API v2 (Glance's wire format)
// under /image, so that unmodified OpenStack clients —
// python-openstackclient, glanceclient, gophercloud — can register,
// upload, share and download images.
//
// The package owns the Glance wire format at the edge and nothing else:
// image records live in the servers' Raft state (the Image RPC endpoint),
// and image data in the servers' image stores, reached through the Data
// interface the agent provides (streams of the RPC listener). A request
// goes through the same steps for every resource: a request id, Keystone
// token verification through agent/identity, routing through a
// declarative table, Glance's default policy (owners and admins change an
// image; public and community images are visible to all, private ones to
// their owner's project and admins, shared ones to their accepted
// members), then Glance's JSON bodies, status codes and error bodies.
//
// It must not hold state, and must not read or write image data other
// than through Data.
package glance
