// Package metadata is the metadata service (Nova's nova-api-metadata).
// Each client agent serves, on port 8775 by
// default, the OpenStack format (/openstack/<version>/meta_data.json,
// user_data, vendor_data.json, vendor_data2.json, network_data.json,
// password) and the EC2 format (/<version>/meta-data/…, user-data) for
// the instances it hosts, reading them from the servers' state over RPC.
//
// An instance sees only its own data: a request is matched by its source
// address to the fixed IP of a port of an instance on one of the agent's
// hosts, or, from a metadata proxy, by Nova's X-Instance-ID header signed
// with the shared secret (HMAC-SHA256). What it answers is built by
// client/instancedata, the same tree a config drive holds.
//
// The package holds no state of its own beyond a short cache, never
// writes state except the guest's one password post (through the
// servers' Instance.SetPassword), and does not talk to a hypervisor.
package metadata
