// Package instancedata is the content of an instance's metadata, as
// Nova's InstanceMetadata builds it: read from the servers' state over
// RPC (the instance, its key pair, zone, ports, networks, subnets and
// floating IPs) and laid out in the EC2 and OpenStack formats of every
// version Nova serves. The metadata service (agent/metadata) answers it
// over HTTP; the hypervisor agent (client) writes it onto config drives
// (Files).
//
// It owns no state and serves nothing: it must not listen, cache or
// write state, and must not import an HTTP API or a virt driver.
package instancedata
