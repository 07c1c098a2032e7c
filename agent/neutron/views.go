package neutron

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Neutron's JSON views of the objects. Attributes only admins may read
// by Neutron's default policy (provider:*, most of binding:*, a router's
// distributed and ha) are left out for everyone else.

func isoTime(ns int64) string {
	if ns == 0 {
		return "1970-01-01T00:00:00Z"
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05Z")
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// standard adds the standard attributes every resource has.
func standard(v map[string]any, project, description string, created, updated int64, revision uint64) map[string]any {
	v["tenant_id"] = project
	v["project_id"] = project
	v["description"] = description
	v["created_at"] = isoTime(created)
	v["updated_at"] = isoTime(updated)
	v["revision_number"] = revision
	v["tags"] = []any{}
	return v
}

func fixedIPsView(ips []structs.FixedIP) []any {
	out := make([]any, 0, len(ips))
	for _, ip := range ips {
		out = append(out, map[string]any{"subnet_id": ip.SubnetID, "ip_address": ip.IPAddress})
	}
	return out
}

func routesView(routes []structs.HostRoute) []any {
	out := make([]any, 0, len(routes))
	for _, r := range routes {
		out = append(out, map[string]any{"destination": r.Destination, "nexthop": r.NextHop})
	}
	return out
}

func strings0(list []string) []any {
	out := make([]any, 0, len(list))
	for _, s := range list {
		out = append(out, s)
	}
	return out
}

func (q *request) networkView(n *structs.Network, objs *structs.NetObjects) map[string]any {
	status := structs.NetStatusActive
	if !n.AdminStateUp {
		status = structs.NetStatusDown
	}
	v := map[string]any{
		"id": n.ID, "name": n.Name, "admin_state_up": n.AdminStateUp, "status": status,
		"subnets": strings0(objs.SubnetIDs[n.ID]), "shared": n.Shared, "router:external": n.External,
		"is_default": n.IsDefault, "mtu": n.MTU, "port_security_enabled": n.PortSecurityEnabled,
		"availability_zone_hints": []any{}, "availability_zones": []any{"nova"},
		"ipv4_address_scope": nil, "ipv6_address_scope": nil, "qos_policy_id": nil, "l2_adjacency": true,
		"dns_domain": "",
	}
	if q.isAdmin() {
		v["provider:network_type"] = n.NetworkType
		v["provider:physical_network"] = nullString(n.PhysicalNetwork)
		if n.NetworkType == structs.NetTypeFlat || n.NetworkType == structs.NetTypeLocal {
			v["provider:segmentation_id"] = nil
		} else {
			v["provider:segmentation_id"] = n.SegmentationID
		}
	}
	return standard(v, n.ProjectID, n.Description, n.CreatedAt, n.UpdatedAt, n.Revision)
}

func (q *request) subnetView(s *structs.Subnet, _ *structs.NetObjects) map[string]any {
	pools := make([]any, 0, len(s.AllocationPools))
	for _, p := range s.AllocationPools {
		pools = append(pools, map[string]any{"start": p.Start, "end": p.End})
	}
	v := map[string]any{
		"id": s.ID, "name": s.Name, "network_id": s.NetworkID, "ip_version": s.IPVersion, "cidr": s.CIDR,
		"gateway_ip": nullString(s.GatewayIP), "allocation_pools": pools, "dns_nameservers": strings0(s.DNSNameservers),
		"host_routes": routesView(s.HostRoutes), "enable_dhcp": s.EnableDHCP,
		"ipv6_address_mode": nullString(s.IPv6AddressMode), "ipv6_ra_mode": nullString(s.IPv6RAMode),
		"subnetpool_id": nil, "segment_id": nil, "service_types": []any{}, "dns_publish_fixed_ip": false,
	}
	return standard(v, s.ProjectID, s.Description, s.CreatedAt, s.UpdatedAt, s.Revision)
}

// bridgeName and tapName are the Linux bridge of a network and the tap
// device of a port, as Neutron's linuxbridge agent names them; the
// dataplane will create them.
func bridgeName(networkID string) string { return "brq" + prefix(networkID, 11) }
func tapName(portID string) string       { return "tap" + prefix(portID, 11) }

func prefix(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}

func (q *request) portView(p *structs.Port, objs *structs.NetObjects) map[string]any {
	b := objs.Bindings[p.ID]
	if b == nil {
		b = &structs.PortBinding{HostName: p.BindingHostID, Status: structs.NetStatusDown}
	}
	pairs := make([]any, 0, len(p.AllowedAddressPairs))
	for _, pair := range p.AllowedAddressPairs {
		mac := pair.MACAddress
		if mac == "" {
			mac = p.MACAddress
		}
		pairs = append(pairs, map[string]any{"ip_address": pair.IPAddress, "mac_address": mac})
	}
	v := map[string]any{
		"id": p.ID, "name": p.Name, "network_id": p.NetworkID, "admin_state_up": p.AdminStateUp, "status": b.Status,
		"mac_address": p.MACAddress, "fixed_ips": fixedIPsView(p.FixedIPs), "device_id": p.DeviceID,
		"device_owner": p.DeviceOwner, "security_groups": strings0(p.SecurityGroups), "allowed_address_pairs": pairs,
		"port_security_enabled": p.PortSecurityEnabled, "binding:vnic_type": p.BindingVNICType,
		"extra_dhcp_opts": []any{}, "dns_name": "", "ip_allocation": "immediate", "data_plane_status": nil,
		"propagate_uplink_status": false, "qos_policy_id": nil, "qos_network_policy_id": nil, "resource_request": nil,
	}
	if q.isAdmin() {
		profile := p.BindingProfile
		if profile == nil {
			profile = map[string]any{}
		}
		v["binding:host_id"] = b.HostName
		v["binding:profile"] = profile
		if b.HostName == "" {
			v["binding:vif_type"] = structs.VIFTypeUnbound
			v["binding:vif_details"] = map[string]any{}
		} else {
			v["binding:vif_type"] = structs.VIFTypeBridge
			v["binding:vif_details"] = map[string]any{"port_filter": true, "connectivity": "l2",
				"bridge_name": bridgeName(p.NetworkID), "tap_name": tapName(p.ID)}
		}
	}
	return standard(v, p.ProjectID, p.Description, p.CreatedAt, p.UpdatedAt, p.Revision)
}

func intOrNull(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func (q *request) ruleView(r *structs.SecurityGroupRule, _ *structs.NetObjects) map[string]any {
	v := map[string]any{
		"id": r.ID, "security_group_id": r.SecurityGroupID, "direction": r.Direction, "ethertype": r.EtherType,
		"protocol": nullString(r.Protocol), "port_range_min": intOrNull(r.PortRangeMin), "port_range_max": intOrNull(r.PortRangeMax),
		"remote_ip_prefix": nullString(r.RemoteIPPrefix), "remote_group_id": nullString(r.RemoteGroupID),
		"remote_address_group_id": nil, "normalized_cidr": nullString(r.RemoteIPPrefix),
	}
	return standard(v, r.ProjectID, r.Description, r.CreatedAt, r.UpdatedAt, r.Revision)
}

func (q *request) groupView(g *structs.SecurityGroup, objs *structs.NetObjects) map[string]any {
	rules := []any{}
	for _, r := range objs.SecurityGroupRules {
		if r.SecurityGroupID == g.ID {
			rules = append(rules, q.ruleView(r, objs))
		}
	}
	v := map[string]any{"id": g.ID, "name": g.Name, "stateful": g.Stateful, "shared": false, "security_group_rules": rules}
	return standard(v, g.ProjectID, g.Description, g.CreatedAt, g.UpdatedAt, g.Revision)
}

func (q *request) floatingIPView(f *structs.FloatingIP, _ *structs.NetObjects) map[string]any {
	v := map[string]any{
		"id": f.ID, "floating_ip_address": f.FloatingIPAddress, "floating_network_id": f.FloatingNetworkID,
		"router_id": nullString(f.RouterID), "port_id": nullString(f.PortID), "fixed_ip_address": nullString(f.FixedIPAddress),
		"status": f.Status(), "port_details": nil, "port_forwardings": []any{}, "dns_domain": "", "dns_name": "", "qos_policy_id": nil,
	}
	return standard(v, f.ProjectID, f.Description, f.CreatedAt, f.UpdatedAt, f.Revision)
}

func (q *request) routerView(r *structs.Router, _ *structs.NetObjects) map[string]any {
	var gw any
	if r.Gateway != nil {
		gw = map[string]any{"network_id": r.Gateway.NetworkID, "enable_snat": r.Gateway.EnableSNAT,
			"external_fixed_ips": fixedIPsView(r.Gateway.ExternalFixedIPs)}
	}
	status := structs.NetStatusActive
	if !r.AdminStateUp {
		status = structs.NetStatusDown
	}
	v := map[string]any{
		"id": r.ID, "name": r.Name, "admin_state_up": r.AdminStateUp, "status": status, "external_gateway_info": gw,
		"routes": routesView(r.Routes), "availability_zone_hints": []any{}, "availability_zones": []any{"nova"}, "flavor_id": nil,
	}
	if q.isAdmin() {
		v["distributed"], v["ha"] = r.Distributed, r.HA
	}
	return standard(v, r.ProjectID, r.Description, r.CreatedAt, r.UpdatedAt, r.Revision)
}
