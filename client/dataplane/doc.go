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
// Networks span hosts. A VXLAN tenant network gets a VXLAN device per
// host (vx- + the network id's first 11 characters; its VNI, the
// host's tunnel endpoint as local address, UDP 4789, no learning) on
// its bridge, programmed as Neutron's l2population does: a forwarding
// entry per port of the network on another host (its MAC to its host's
// endpoint), one all-zero entry per such host for broadcast and
// unknown traffic (head-end replication, no multicast, nothing sent to
// hosts without ports of the network), and neighbour entries the
// device answers ARP and neighbour solicitations from. DHCP and router
// advertisements stay on their host. A flat or VLAN provider network's
// bridge gets the physical interface its physical network maps to, or
// a sub-interface <iface>.<vid> of it.
//
// Tenant traffic is routed by policy, never by the host's main table
// (routing_plan.go): a routing table per router and network with the
// router's subnets and its way out, chosen by ip rules on the bridge
// and source subnet, so tenants with the same CIDR on one host route
// independently, and an unreachable rule for what no router takes.
// Floating IPs are NATed on the host of their port; a router's source
// NAT lives on one elected host, and the others send what leaves
// without a floating IP over the network to that host's bridge, as
// Neutron DVR sends it to its SNAT node.
//
// Plane applies a Desired state idempotently: it creates what is
// missing and removes what it owns that no port needs any more, so one
// call both converges after a change and cleans up after a restart.
// Agent drives it from the servers: it watches the ports bound to its
// host and the ports of every network it serves (wherever they are
// bound), rebuilds the desired state on every change and periodically,
// and reports DHCP leases (NetLease.Report).
//
// Everything runs through the ip, bridge, nft and dnsmasq commands,
// optionally inside a network namespace (Config.Netns), which is how
// the tests run it without touching the host.
//
// It must not touch a device, rule or process it did not create (a
// physical interface it is given is enslaved to a bridge, never made,
// changed or removed), nor write state other than the leases it
// reports.
package dataplane
