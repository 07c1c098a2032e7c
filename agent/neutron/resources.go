package neutron

import (
	"github.com/stratus-cloud/stratus/structs"
)

// resource describes one of Neutron's collections.
type resource struct {
	kind     string // structs.NetKind*
	singular string // body key of one object
	plural   string // body key of a list
	path     string // URL segment
	attrs    map[string]*attr
	required []string
	// init allocates a create request's object with Neutron's defaults.
	init       func(req *structs.NetWriteRequest)
	setProject func(req *structs.NetWriteRequest, project string)
	views      func(q *request, objs *structs.NetObjects) []map[string]any
	// notFound is the error of an unknown id.
	notFound func(id string) error
}

var resources []*resource

func init() {
	resources = []*resource{networkResource(), subnetResource(), portResource(), groupResource(), ruleResource(),
		floatingIPResource(), routerResource()}
}

func networkResource() *resource {
	n := func(r *structs.NetWriteRequest) *structs.Network { return r.Network }
	str := func(name string, set func(*structs.Network, string)) *attr {
		return &attr{post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
			s, err := asName(name, v)
			set(n(r), s)
			return err
		}}
	}
	boolean := func(name string, put bool, set func(*structs.Network, bool)) *attr {
		return &attr{post: true, put: put, set: func(r *structs.NetWriteRequest, v any) error {
			b, err := asBool(name, v)
			set(n(r), b)
			return err
		}}
	}
	return &resource{
		kind: structs.NetKindNetwork, singular: "network", plural: "networks", path: "networks",
		attrs: map[string]*attr{
			"name":                  str("name", func(x *structs.Network, s string) { x.Name = s }),
			"description":           str("description", func(x *structs.Network, s string) { x.Description = s }),
			"admin_state_up":        boolean("admin_state_up", true, func(x *structs.Network, b bool) { x.AdminStateUp = b }),
			"shared":                boolean("shared", true, func(x *structs.Network, b bool) { x.Shared = b }),
			"router:external":       boolean("router:external", true, func(x *structs.Network, b bool) { x.External = b }),
			"is_default":            boolean("is_default", true, func(x *structs.Network, b bool) { x.IsDefault = b }),
			"port_security_enabled": boolean("port_security_enabled", true, func(x *structs.Network, b bool) { x.PortSecurityEnabled = b }),
			"mtu": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				m, err := asInt("mtu", v)
				n(r).MTU = m
				return err
			}},
			"provider:network_type":     str("provider:network_type", func(x *structs.Network, s string) { x.NetworkType = s }),
			"provider:physical_network": str("provider:physical_network", func(x *structs.Network, s string) { x.PhysicalNetwork = s }),
			"provider:segmentation_id": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				id, err := asNullInt("provider:segmentation_id", v)
				if id != nil {
					n(r).SegmentationID = *id
				}
				return err
			}},
			"segments":                {post: true, set: setSegments},
			"availability_zone_hints": ignored,
			"dns_domain":              ignored,
			"qos_policy_id":           mustBeNull("qos_policy_id"),
		},
		init: func(r *structs.NetWriteRequest) {
			r.Network = &structs.Network{AdminStateUp: true, PortSecurityEnabled: true}
		},
		setProject: func(r *structs.NetWriteRequest, p string) { r.Network.ProjectID = p },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.Networks))
			for _, x := range objs.Networks {
				out = append(out, q.networkView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindNetwork, id) },
	}
}

func subnetResource() *resource {
	s := func(r *structs.NetWriteRequest) *structs.Subnet { return r.Subnet }
	str := func(name string, put bool, set func(*structs.Subnet, string)) *attr {
		return &attr{post: true, put: put, set: func(r *structs.NetWriteRequest, v any) error {
			x, err := asName(name, v)
			set(s(r), x)
			return err
		}}
	}
	nullStr := func(name string, put bool, set func(*structs.Subnet, string)) *attr {
		return &attr{post: true, put: put, set: func(r *structs.NetWriteRequest, v any) error {
			x, err := asNullString(name, v)
			set(s(r), x)
			return err
		}}
	}
	return &resource{
		kind: structs.NetKindSubnet, singular: "subnet", plural: "subnets", path: "subnets",
		required: []string{"network_id", "ip_version", "cidr"},
		attrs: map[string]*attr{
			"name":              str("name", true, func(x *structs.Subnet, v string) { x.Name = v }),
			"description":       str("description", true, func(x *structs.Subnet, v string) { x.Description = v }),
			"network_id":        str("network_id", false, func(x *structs.Subnet, v string) { x.NetworkID = v }),
			"cidr":              str("cidr", false, func(x *structs.Subnet, v string) { x.CIDR = v }),
			"gateway_ip":        nullStr("gateway_ip", true, func(x *structs.Subnet, v string) { x.GatewayIP = v }),
			"ipv6_address_mode": nullStr("ipv6_address_mode", false, func(x *structs.Subnet, v string) { x.IPv6AddressMode = v }),
			"ipv6_ra_mode":      nullStr("ipv6_ra_mode", false, func(x *structs.Subnet, v string) { x.IPv6RAMode = v }),
			"ip_version": {post: true, set: func(r *structs.NetWriteRequest, v any) error {
				n, err := asInt("ip_version", v)
				if err == nil && n != 4 && n != 6 {
					return invalid("ip_version", "%d is not in [4, 6]", n)
				}
				s(r).IPVersion = n
				return err
			}},
			"enable_dhcp": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				b, err := asBool("enable_dhcp", v)
				s(r).EnableDHCP = b
				return err
			}},
			"allocation_pools": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				objs, err := asObjects("allocation_pools", v, "start", "end")
				if err != nil {
					return err
				}
				s(r).AllocationPools = nil
				for _, m := range objs {
					start, err1 := asString("allocation_pools", m["start"])
					end, err2 := asString("allocation_pools", m["end"])
					if err1 != nil || err2 != nil {
						return invalid("allocation_pools", "Invalid data format for IP pool: '%s'", repr(m))
					}
					s(r).AllocationPools = append(s(r).AllocationPools, structs.IPRange{Start: start, End: end})
				}
				return nil
			}},
			"dns_nameservers": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				l, err := asStrings("dns_nameservers", v)
				s(r).DNSNameservers = l
				return err
			}},
			"host_routes": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				routes, err := asRoutes("host_routes", v)
				s(r).HostRoutes = routes
				return err
			}},
			"subnetpool_id":          mustBeNull("subnetpool_id"),
			"use_default_subnetpool": ignored,
			"segment_id":             mustBeNull("segment_id"),
			"service_types":          mustBeNull("service_types"),
			"dns_publish_fixed_ip":   ignored,
			"prefixlen":              mustBeNull("prefixlen"),
		},
		init: func(r *structs.NetWriteRequest) {
			r.Subnet = &structs.Subnet{EnableDHCP: true}
		},
		setProject: func(r *structs.NetWriteRequest, p string) { r.Subnet.ProjectID = p },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.Subnets))
			for _, x := range objs.Subnets {
				out = append(out, q.subnetView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindSubnet, id) },
	}
}

func portResource() *resource {
	p := func(r *structs.NetWriteRequest) *structs.Port { return r.Port }
	str := func(name string, put bool, set func(*structs.Port, string)) *attr {
		return &attr{post: true, put: put, set: func(r *structs.NetWriteRequest, v any) error {
			x, err := asName(name, v)
			set(p(r), x)
			return err
		}}
	}
	nullStr := func(name string, set func(*structs.Port, string)) *attr {
		return &attr{post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
			x, err := asNullString(name, v)
			set(p(r), x)
			return err
		}}
	}
	boolean := func(name string, set func(*structs.Port, bool)) *attr {
		return &attr{post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
			b, err := asBool(name, v)
			set(p(r), b)
			return err
		}}
	}
	return &resource{
		kind: structs.NetKindPort, singular: "port", plural: "ports", path: "ports",
		required: []string{"network_id"},
		attrs: map[string]*attr{
			"name":                  str("name", true, func(x *structs.Port, v string) { x.Name = v }),
			"description":           str("description", true, func(x *structs.Port, v string) { x.Description = v }),
			"network_id":            str("network_id", false, func(x *structs.Port, v string) { x.NetworkID = v }),
			"mac_address":           str("mac_address", true, func(x *structs.Port, v string) { x.MACAddress = v }),
			"device_id":             nullStr("device_id", func(x *structs.Port, v string) { x.DeviceID = v }),
			"device_owner":          nullStr("device_owner", func(x *structs.Port, v string) { x.DeviceOwner = v }),
			"binding:host_id":       nullStr("binding:host_id", func(x *structs.Port, v string) { x.BindingHostID = v }),
			"binding:vnic_type":     str("binding:vnic_type", true, func(x *structs.Port, v string) { x.BindingVNICType = v }),
			"admin_state_up":        boolean("admin_state_up", func(x *structs.Port, b bool) { x.AdminStateUp = b }),
			"port_security_enabled": boolean("port_security_enabled", func(x *structs.Port, b bool) { x.PortSecurityEnabled = b }),
			"fixed_ips": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				ips, err := asFixedIPs("fixed_ips", v)
				p(r).FixedIPs = ips
				return err
			}},
			"security_groups": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				l, err := asStrings("security_groups", v)
				p(r).SecurityGroups = l
				return err
			}},
			"allowed_address_pairs": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				pairs, err := asAddressPairs(v)
				p(r).AllowedAddressPairs = pairs
				return err
			}},
			"binding:profile": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				m, ok := v.(map[string]any)
				if !ok && v != nil {
					return invalid("binding:profile", "'%s' is not a dictionary", repr(v))
				}
				p(r).BindingProfile = m
				return nil
			}},
			"extra_dhcp_opts":         mustBeNull("extra_dhcp_opts"),
			"dns_name":                ignored,
			"dns_domain":              ignored,
			"qos_policy_id":           mustBeNull("qos_policy_id"),
			"propagate_uplink_status": ignored,
		},
		init: func(r *structs.NetWriteRequest) {
			r.Port = &structs.Port{AdminStateUp: true}
		},
		setProject: func(r *structs.NetWriteRequest, pr string) { r.Port.ProjectID = pr },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.Ports))
			for _, x := range objs.Ports {
				out = append(out, q.portView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindPort, id) },
	}
}

// asAddressPairs reads a port's allowed_address_pairs (null: none).
func asAddressPairs(v any) ([]structs.AddressPair, error) {
	if v == nil {
		return nil, nil
	}
	objs, err := asObjects("allowed_address_pairs", v, "ip_address", "mac_address")
	if err != nil {
		return nil, err
	}
	var pairs []structs.AddressPair
	for _, m := range objs {
		ip, err := asString("allowed_address_pairs", m["ip_address"])
		if err != nil {
			return nil, badRequest("Allowed address pairs must contain ip_address")
		}
		mac, err := asNullString("allowed_address_pairs", m["mac_address"])
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, structs.AddressPair{IPAddress: ip, MACAddress: mac})
	}
	return pairs, nil
}

func groupResource() *resource {
	g := func(r *structs.NetWriteRequest) *structs.SecurityGroup { return r.SecurityGroup }
	return &resource{
		kind: structs.NetKindSecurityGroup, singular: "security_group", plural: "security_groups", path: "security-groups",
		attrs: map[string]*attr{
			"name": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asName("name", v)
				g(r).Name = s
				return err
			}},
			"description": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asName("description", v)
				g(r).Description = s
				return err
			}},
			"stateful": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				b, err := asBool("stateful", v)
				g(r).Stateful = b
				return err
			}},
		},
		init:       func(r *structs.NetWriteRequest) { r.SecurityGroup = &structs.SecurityGroup{Stateful: true} },
		setProject: func(r *structs.NetWriteRequest, p string) { r.SecurityGroup.ProjectID = p },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.SecurityGroups))
			for _, x := range objs.SecurityGroups {
				out = append(out, q.groupView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindSecurityGroup, id) },
	}
}

func ruleResource() *resource {
	rl := func(r *structs.NetWriteRequest) *structs.SecurityGroupRule { return r.Rule }
	str := func(name string, set func(*structs.SecurityGroupRule, string)) *attr {
		return &attr{post: true, set: func(r *structs.NetWriteRequest, v any) error {
			x, err := asNullString(name, v)
			set(rl(r), x)
			return err
		}}
	}
	port := func(name string, set func(*structs.SecurityGroupRule, *int)) *attr {
		return &attr{post: true, set: func(r *structs.NetWriteRequest, v any) error {
			n, err := asNullInt(name, v)
			set(rl(r), n)
			return err
		}}
	}
	return &resource{
		kind: structs.NetKindSecurityGroupRule, singular: "security_group_rule", plural: "security_group_rules", path: "security-group-rules",
		required: []string{"security_group_id", "direction"},
		attrs: map[string]*attr{
			"security_group_id": str("security_group_id", func(x *structs.SecurityGroupRule, v string) { x.SecurityGroupID = v }),
			"direction":         str("direction", func(x *structs.SecurityGroupRule, v string) { x.Direction = v }),
			"ethertype":         str("ethertype", func(x *structs.SecurityGroupRule, v string) { x.EtherType = v }),
			"remote_ip_prefix":  str("remote_ip_prefix", func(x *structs.SecurityGroupRule, v string) { x.RemoteIPPrefix = v }),
			"remote_group_id":   str("remote_group_id", func(x *structs.SecurityGroupRule, v string) { x.RemoteGroupID = v }),
			"port_range_min":    port("port_range_min", func(x *structs.SecurityGroupRule, v *int) { x.PortRangeMin = v }),
			"port_range_max":    port("port_range_max", func(x *structs.SecurityGroupRule, v *int) { x.PortRangeMax = v }),
			"protocol": {post: true, set: func(r *structs.NetWriteRequest, v any) error {
				if n, ok := v.(interface{ String() string }); ok {
					rl(r).Protocol = n.String()
					return nil
				}
				s, err := asNullString("protocol", v)
				rl(r).Protocol = s
				return err
			}},
			"description": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asName("description", v)
				rl(r).Description = s
				return err
			}},
			"remote_address_group_id": mustBeNull("remote_address_group_id"),
		},
		init:       func(r *structs.NetWriteRequest) { r.Rule = &structs.SecurityGroupRule{} },
		setProject: func(r *structs.NetWriteRequest, p string) { r.Rule.ProjectID = p },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.SecurityGroupRules))
			for _, x := range objs.SecurityGroupRules {
				out = append(out, q.ruleView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindSecurityGroupRule, id) },
	}
}

func floatingIPResource() *resource {
	f := func(r *structs.NetWriteRequest) *structs.FloatingIP { return r.FloatingIP }
	return &resource{
		kind: structs.NetKindFloatingIP, singular: "floatingip", plural: "floatingips", path: "floatingips",
		required: []string{"floating_network_id"},
		attrs: map[string]*attr{
			"floating_network_id": {post: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asString("floating_network_id", v)
				f(r).FloatingNetworkID = s
				return err
			}},
			"floating_ip_address": {post: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asNullString("floating_ip_address", v)
				f(r).FloatingIPAddress = s
				return err
			}},
			"subnet_id": {post: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asNullString("subnet_id", v)
				r.SubnetID = s
				return err
			}},
			"port_id": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asNullString("port_id", v)
				f(r).PortID = s
				return err
			}},
			"fixed_ip_address": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asNullString("fixed_ip_address", v)
				f(r).FixedIPAddress = s
				return err
			}},
			"description": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asName("description", v)
				f(r).Description = s
				return err
			}},
			"dns_name":      ignored,
			"dns_domain":    ignored,
			"qos_policy_id": mustBeNull("qos_policy_id"),
		},
		init:       func(r *structs.NetWriteRequest) { r.FloatingIP = &structs.FloatingIP{} },
		setProject: func(r *structs.NetWriteRequest, p string) { r.FloatingIP.ProjectID = p },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.FloatingIPs))
			for _, x := range objs.FloatingIPs {
				out = append(out, q.floatingIPView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindFloatingIP, id) },
	}
}

func routerResource() *resource {
	rt := func(r *structs.NetWriteRequest) *structs.Router { return r.Router }
	boolean := func(name string, set func(*structs.Router, bool)) *attr {
		return &attr{post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
			b, err := asBool(name, v)
			set(rt(r), b)
			return err
		}}
	}
	return &resource{
		kind: structs.NetKindRouter, singular: "router", plural: "routers", path: "routers",
		attrs: map[string]*attr{
			"name": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asName("name", v)
				rt(r).Name = s
				return err
			}},
			"description": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				s, err := asName("description", v)
				rt(r).Description = s
				return err
			}},
			"admin_state_up": boolean("admin_state_up", func(x *structs.Router, b bool) { x.AdminStateUp = b }),
			"distributed":    boolean("distributed", func(x *structs.Router, b bool) { x.Distributed = b }),
			"ha":             boolean("ha", func(x *structs.Router, b bool) { x.HA = b }),
			"routes": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				routes, err := asRoutes("routes", v)
				rt(r).Routes = routes
				return err
			}},
			"external_gateway_info": {post: true, put: true, set: func(r *structs.NetWriteRequest, v any) error {
				if v == nil {
					rt(r).Gateway = nil
					return nil
				}
				m, ok := v.(map[string]any)
				if !ok {
					return invalid("external_gateway_info", "'%s' is not a dictionary", repr(v))
				}
				gw := &structs.RouterGateway{EnableSNAT: true}
				for k, val := range m {
					var err error
					switch k {
					case "network_id":
						gw.NetworkID, err = asString("external_gateway_info", val)
					case "enable_snat":
						gw.EnableSNAT, err = asBool("external_gateway_info", val)
						r.Fields = append(r.Fields, "external_gateway_info.enable_snat")
					case "external_fixed_ips":
						gw.ExternalFixedIPs, err = asFixedIPs("external_gateway_info", val)
					case "qos_policy_id":
					default:
						err = invalid("external_gateway_info", "Unrecognized attribute(s) '%s'", k)
					}
					if err != nil {
						return err
					}
				}
				if gw.NetworkID == "" {
					return invalid("external_gateway_info", "Validation of dictionary's keys failed. Expected keys: {'network_id'}")
				}
				rt(r).Gateway = gw
				return nil
			}},
			"availability_zone_hints": ignored,
			"flavor_id":               mustBeNull("flavor_id"),
		},
		init:       func(r *structs.NetWriteRequest) { r.Router = &structs.Router{AdminStateUp: true} },
		setProject: func(r *structs.NetWriteRequest, p string) { r.Router.ProjectID = p },
		views: func(q *request, objs *structs.NetObjects) []map[string]any {
			out := make([]map[string]any, 0, len(objs.Routers))
			for _, x := range objs.Routers {
				out = append(out, q.routerView(x, objs))
			}
			return out
		},
		notFound: func(id string) error { return structs.NetNotFound(structs.NetKindRouter, id) },
	}
}
