// Package dataplane wires a hypervisor host's networking from state, as
// Neutron's linuxbridge and DHCP agents (and nova-network before them)
// did: a Linux bridge per network (brq + the network id's first 11
// characters) that the guests' taps join, a dnsmasq per network serving
// DHCP from the ports' static MAC→address entries with its leases
// reported back into state (nova-dhcpbridge's role), nftables rules per
// port for its security groups (with anti-spoofing), floating IPs as
// DNAT/SNAT on the external network's bridge, routers' SNAT, and the
// metadata address 169.254.169.254:80 redirected to the agent's
// metadata listener.
//
// Plane applies a Desired state idempotently: it creates what is
// missing and removes what it owns that no port needs any more, so one
// call both converges after a change and cleans up after a restart.
// Agent drives it from the servers: it watches the ports bound to its
// host, rebuilds the desired state on every change and periodically,
// and reports DHCP leases (NetLease.Report).
//
// Everything runs through the ip, nft and dnsmasq commands, optionally
// inside a network namespace (Config.Netns), which is how the tests run
// it without touching the host.
//
// It must not touch a device, rule or process it did not create, nor
// write state other than the leases it reports.
package dataplane
