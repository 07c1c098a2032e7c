package command

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	groups["network"] = "Manage networks (Neutron's networks, as the operator)"
	groups["subnet"] = "Manage the subnets of networks"
	groups["port"] = "Manage ports, the places of NICs on networks"
	register("network list", networkListCommand)
	register("network show", networkShowCommand)
	register("network create", networkCreateCommand)
	register("network delete", networkDeleteCommand)
	register("subnet list", subnetListCommand)
	register("subnet create", subnetCreateCommand)
	register("subnet delete", subnetDeleteCommand)
	register("port list", portListCommand)
	register("port create", portCreateCommand)
	register("port delete", portDeleteCommand)
}

var networkListCommand = (&spec{
	synopsis: "List networks",
	args:     "[options]",
	help:     "List every project's networks.",
	nargs:    exactly(0),
	list:     true,
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			nets, _, err := e.client.Networks().List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing networks: %v", err)
			}
			if nets == nil {
				nets = []*api.Network{}
			}
			return e.render(nets, func(w io.Writer) {
				if len(nets) == 0 {
					fmt.Fprintln(w, "No networks found")
					return
				}
				rows := make([][]string, 0, len(nets))
				for _, n := range nets {
					rows = append(rows, []string{n.ID, n.Name, strings.Join(n.Subnets, ","), btoa(n.Shared), btoa(n.External), n.ProjectID})
				}
				printTable(w, []string{"ID", "Name", "Subnets", "Shared", "External", "Project"}, rows)
			})
		}
	},
}).factory()

var networkShowCommand = (&spec{
	synopsis: "Show a network",
	args:     "[options] ID_OR_NAME",
	help:     "Show a network, given its ID or its name, with its subnets.",
	nargs:    exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			n, _, err := e.client.Networks().Info(args[0], e.queryOptions())
			if err != nil {
				return e.fail("Error reading network %q: %v", args[0], err)
			}
			subs, _, err := e.client.Subnets().List(n.ID, e.queryOptions())
			if err != nil {
				return e.fail("Error listing the subnets of network %q: %v", args[0], err)
			}
			return e.render(n, func(w io.Writer) {
				segment := n.NetworkType
				if n.PhysicalNetwork != "" {
					segment += " on " + n.PhysicalNetwork
				}
				if n.SegmentationID != 0 {
					segment += fmt.Sprintf(" (%d)", n.SegmentationID)
				}
				printKV(w, []kv{
					{"ID", n.ID}, {"Name", n.Name}, {"Project", n.ProjectID}, {"Admin State Up", btoa(n.AdminStateUp)},
					{"Shared", btoa(n.Shared)}, {"External", btoa(n.External)}, {"Default External", btoa(n.IsDefault)},
					{"MTU", itoa(n.MTU)}, {"Segment", segment}, {"Port Security", btoa(n.PortSecurityEnabled)},
					{"Description", n.Description},
				})
				fmt.Fprint(w, "\nSubnets\n")
				if len(subs) == 0 {
					fmt.Fprintln(w, "<none>")
					return
				}
				rows := make([][]string, 0, len(subs))
				for _, s := range subs {
					var pools []string
					for _, p := range s.AllocationPools {
						pools = append(pools, p.Start+"-"+p.End)
					}
					rows = append(rows, []string{s.ID, s.Name, s.CIDR, s.GatewayIP, strings.Join(pools, ","), btoa(s.EnableDHCP)})
				}
				printTable(w, []string{"ID", "Name", "CIDR", "Gateway", "Pools", "DHCP"}, rows)
			})
		}
	},
}).factory()

var networkCreateCommand = (&spec{
	synopsis: "Create a network",
	args:     "[options] NAME",
	help: `Create a network named NAME: a VXLAN segment with the lowest free VNI
unless -type says otherwise. With -subnet, also create its IPv4 or IPv6
subnet of that CIDR (gateway at its first address).`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		n := &api.Network{AdminStateUp: true, PortSecurityEnabled: true}
		fs.StringVar(&n.ProjectID, "project", "", "The `ID` of the project that owns the network.")
		fs.BoolVar(&n.Shared, "shared", false, "Share the network with every project.")
		fs.BoolVar(&n.External, "external", false, "Make it an external network (router gateways, floating IPs).")
		fs.BoolVar(&n.IsDefault, "default", false, "Make it the default external network.")
		fs.StringVar(&n.NetworkType, "type", "", "The segment type: vxlan (the default), flat, vlan or local.")
		fs.StringVar(&n.PhysicalNetwork, "physical-network", "", "The physical network of a flat or VLAN segment.")
		fs.IntVar(&n.SegmentationID, "segment", 0, "The VLAN id or VNI (allocated when 0).")
		fs.IntVar(&n.MTU, "mtu", 0, "The MTU (1450 for VXLAN, 1500 otherwise, when 0).")
		fs.StringVar(&n.Description, "description", "", "A description of the network.")
		subnet := fs.String("subnet", "", "Also create a subnet of this `CIDR`.")
		return func(e *env, args []string) int {
			n.Name = args[0]
			out, _, err := e.client.Networks().Create(n)
			if err != nil {
				return e.fail("Error creating network: %v", err)
			}
			if *subnet != "" {
				s, _, err := e.client.Subnets().Create(&api.Subnet{Name: n.Name + "-subnet", NetworkID: out.ID, ProjectID: n.ProjectID,
					CIDR: *subnet, EnableDHCP: true})
				if err != nil {
					return e.fail("Error creating the subnet of network %q: %v", out.ID, err)
				}
				out.Subnets = []string{s.ID}
			}
			return e.render(out, func(w io.Writer) {
				fmt.Fprintf(w, "Network %q created with ID %q\n", out.Name, out.ID)
			})
		}
	},
}).factory()

// deleteEach deletes refs one by one, reporting each.
func deleteEach(e *env, what string, refs []string, del func(string) (*api.WriteMeta, error)) int {
	deleted, code := []string{}, 0
	for _, ref := range refs {
		if _, err := del(ref); err != nil {
			code = e.fail("Error deleting %s %q: %v", what, ref, err)
			continue
		}
		deleted = append(deleted, ref)
	}
	if rc := e.render(map[string][]string{"Deleted": deleted}, func(w io.Writer) {
		for _, ref := range deleted {
			fmt.Fprintf(w, "%s %q deleted\n", strings.ToUpper(what[:1])+what[1:], ref)
		}
	}); rc != 0 {
		return rc
	}
	return code
}

var networkDeleteCommand = (&spec{
	synopsis: "Delete networks",
	args:     "[options] ID_OR_NAME [ID_OR_NAME...]",
	help:     "Delete networks and their subnets. A network with ports is refused.",
	nargs:    atLeast(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, refs []string) int {
			return deleteEach(e, "network", refs, e.client.Networks().Delete)
		}
	},
}).factory()

var subnetListCommand = (&spec{
	synopsis: "List subnets",
	args:     "[options]",
	help:     "List subnets, every network's or, with -network, one's.",
	nargs:    exactly(0),
	list:     true,
	setup: func(fs *flag.FlagSet) runFunc {
		network := fs.String("network", "", "Only the subnets of this network (`ID_OR_NAME`).")
		return func(e *env, _ []string) int {
			id, rc := e.networkID(*network)
			if rc != 0 {
				return rc
			}
			subs, _, err := e.client.Subnets().List(id, e.queryOptions())
			if err != nil {
				return e.fail("Error listing subnets: %v", err)
			}
			if subs == nil {
				subs = []*api.Subnet{}
			}
			return e.render(subs, func(w io.Writer) {
				if len(subs) == 0 {
					fmt.Fprintln(w, "No subnets found")
					return
				}
				rows := make([][]string, 0, len(subs))
				for _, s := range subs {
					rows = append(rows, []string{s.ID, s.Name, s.NetworkID, s.CIDR, s.GatewayIP})
				}
				printTable(w, []string{"ID", "Name", "Network", "CIDR", "Gateway"}, rows)
			})
		}
	},
}).factory()

// networkID resolves a network reference to its id ("" stays "").
func (e *env) networkID(ref string) (string, int) {
	if ref == "" {
		return "", 0
	}
	n, _, err := e.client.Networks().Info(ref, e.queryOptions())
	if err != nil {
		return "", e.fail("Error reading network %q: %v", ref, err)
	}
	return n.ID, 0
}

var subnetCreateCommand = (&spec{
	synopsis: "Create a subnet",
	args:     "[options] -network NETWORK -cidr CIDR NAME",
	help: `Create a subnet named NAME of a network. The gateway defaults to the
CIDR's first address, the allocation pool to the rest of it.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		s := &api.Subnet{EnableDHCP: true}
		network := fs.String("network", "", "The network (`ID_OR_NAME`). Required.")
		fs.StringVar(&s.CIDR, "cidr", "", "The subnet's `CIDR`, such as 192.168.10.0/24. Required.")
		fs.StringVar(&s.GatewayIP, "gateway", "", "The gateway address (the first address by default).")
		fs.StringVar(&s.ProjectID, "project", "", "The `ID` of the project that owns the subnet.")
		noDHCP := fs.Bool("no-dhcp", false, "Do not serve DHCP on the subnet.")
		dns := &stringList{}
		fs.Var(dns, "dns", "A DNS server `ADDRESS`. May be repeated.")
		return func(e *env, args []string) int {
			if *network == "" || s.CIDR == "" {
				return e.usage("-network and -cidr are required")
			}
			id, rc := e.networkID(*network)
			if rc != 0 {
				return rc
			}
			s.Name, s.NetworkID, s.EnableDHCP, s.DNSNameservers = args[0], id, !*noDHCP, *dns
			out, _, err := e.client.Subnets().Create(s)
			if err != nil {
				return e.fail("Error creating subnet: %v", err)
			}
			return e.render(out, func(w io.Writer) {
				fmt.Fprintf(w, "Subnet %q created with ID %q (%s, gateway %s)\n", out.Name, out.ID, out.CIDR, out.GatewayIP)
			})
		}
	},
}).factory()

var subnetDeleteCommand = (&spec{
	synopsis: "Delete subnets",
	args:     "[options] ID_OR_NAME [ID_OR_NAME...]",
	help:     "Delete subnets. A subnet a port has an address on is refused.",
	nargs:    atLeast(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, refs []string) int {
			return deleteEach(e, "subnet", refs, e.client.Subnets().Delete)
		}
	},
}).factory()

var portListCommand = (&spec{
	synopsis: "List ports",
	args:     "[options]",
	help:     "List ports, every network's or, with -network, one's, with their addresses and bindings.",
	nargs:    exactly(0),
	list:     true,
	setup: func(fs *flag.FlagSet) runFunc {
		network := fs.String("network", "", "Only the ports of this network (`ID_OR_NAME`).")
		return func(e *env, _ []string) int {
			id, rc := e.networkID(*network)
			if rc != 0 {
				return rc
			}
			ports, _, err := e.client.Ports().List(id, e.queryOptions())
			if err != nil {
				return e.fail("Error listing ports: %v", err)
			}
			if ports == nil {
				ports = []*api.Port{}
			}
			return e.render(ports, func(w io.Writer) {
				if len(ports) == 0 {
					fmt.Fprintln(w, "No ports found")
					return
				}
				rows := make([][]string, 0, len(ports))
				for _, p := range ports {
					var ips []string
					for _, ip := range p.FixedIPs {
						ips = append(ips, ip.IPAddress)
					}
					rows = append(rows, []string{p.ID, p.Name, p.MACAddress, strings.Join(ips, ","), p.DeviceOwner, p.DeviceID, p.BindingHost, p.Status})
				}
				printTable(w, []string{"ID", "Name", "MAC", "Addresses", "Device Owner", "Device", "Host", "Status"}, rows)
			})
		}
	},
}).factory()

var portCreateCommand = (&spec{
	synopsis: "Create a port",
	args:     "[options] -network NETWORK NAME",
	help: `Create a port named NAME on a network: the lowest free address of its
subnets' pools unless -ip asks for one, and a fa:16:3e MAC unless -mac does.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		p := &api.Port{AdminStateUp: true}
		network := fs.String("network", "", "The network (`ID_OR_NAME`). Required.")
		ips := &stringList{}
		fs.Var(ips, "ip", "An `ADDRESS` the port must have. May be repeated.")
		fs.StringVar(&p.MACAddress, "mac", "", "The port's MAC address.")
		fs.StringVar(&p.ProjectID, "project", "", "The `ID` of the project that owns the port.")
		return func(e *env, args []string) int {
			if *network == "" {
				return e.usage("-network is required")
			}
			id, rc := e.networkID(*network)
			if rc != 0 {
				return rc
			}
			p.Name, p.NetworkID = args[0], id
			for _, ip := range *ips {
				p.FixedIPs = append(p.FixedIPs, api.FixedIP{IPAddress: ip})
			}
			out, _, err := e.client.Ports().Create(p)
			if err != nil {
				return e.fail("Error creating port: %v", err)
			}
			return e.render(out, func(w io.Writer) {
				var addrs []string
				for _, ip := range out.FixedIPs {
					addrs = append(addrs, ip.IPAddress)
				}
				fmt.Fprintf(w, "Port %q created with ID %q (MAC %s, addresses %s)\n", out.Name, out.ID, out.MACAddress, strings.Join(addrs, ","))
			})
		}
	},
}).factory()

var portDeleteCommand = (&spec{
	synopsis: "Delete ports",
	args:     "[options] ID_OR_NAME [ID_OR_NAME...]",
	help:     "Delete ports, releasing their addresses. Routers' and floating IPs' ports are refused.",
	nargs:    atLeast(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, refs []string) int {
			return deleteEach(e, "port", refs, e.client.Ports().Delete)
		}
	},
}).factory()
