package instancedata

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// The OpenStack metadata versions Nova serves, oldest first
// (nova.api.metadata.base).
const (
	folsom    = "2012-08-10"
	grizzly   = "2013-04-04"
	havana    = "2013-10-17"
	liberty   = "2015-10-15"
	newtonOne = "2016-06-30"
	newtonTwo = "2016-10-06"
	ocata     = "2017-02-22"
	rocky     = "2018-08-27"
	victoria  = "2020-10-14"
)

// OpenStackVersions are the versions of the OpenStack format; "latest"
// is the last.
var OpenStackVersions = []string{folsom, grizzly, havana, liberty, newtonOne, newtonTwo, ocata, rocky, victoria}

// The files of one OpenStack version.
const (
	metaDataJSON    = "meta_data.json"
	userDataName    = "user_data"
	passwordName    = "password"
	vendorDataJSON  = "vendor_data.json"
	vendorData2JSON = "vendor_data2.json"
	networkDataJSON = "network_data.json"
)

// atLeast reports whether version v has what since introduced (ISO dates
// compare as strings).
func atLeast(v, since string) bool { return v >= since }

// openStackVersion resolves "latest" and checks a version; ok is false
// for one Nova does not serve.
func openStackVersion(v string) (string, bool) {
	if v == "latest" {
		return OpenStackVersions[len(OpenStackVersions)-1], true
	}
	return v, slices.Contains(OpenStackVersions, v)
}

// openStackListing is what GET /openstack/<version>/ lists.
func (d *InstanceData) openStackListing(v string) []string {
	out := []string{metaDataJSON}
	if d.Instance.UserData != "" {
		out = append(out, userDataName)
	}
	if atLeast(v, grizzly) {
		out = append(out, passwordName)
	}
	if atLeast(v, havana) {
		out = append(out, vendorDataJSON)
	}
	if atLeast(v, liberty) {
		out = append(out, networkDataJSON)
	}
	if atLeast(v, newtonTwo) {
		out = append(out, vendorData2JSON)
	}
	return out
}

// openStackFile answers one file of version v (already resolved); ok is
// false when the version has no such file. The password is served by the
// handler, since it is also written.
func (d *InstanceData) openStackFile(v, name string) ([]byte, bool, error) {
	if !slices.Contains(d.openStackListing(v), name) || name == passwordName {
		return nil, false, nil
	}
	var body any
	switch name {
	case userDataName:
		return []byte(d.Instance.UserData), true, nil
	case metaDataJSON:
		body = d.metaData(v)
	case vendorDataJSON, vendorData2JSON:
		// Nova's StaticJSON and DynamicJSON providers with nothing
		// configured.
		body = map[string]any{}
	case networkDataJSON:
		body = d.networkData()
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, false, fmt.Errorf("encode %s: %w", name, err)
	}
	return b, true, nil
}

// metaData is meta_data.json at version v, with the keys Nova's
// _metadata_as_json gives that version.
func (d *InstanceData) metaData(v string) map[string]any {
	inst := d.Instance
	md := map[string]any{
		"uuid":              inst.ID,
		"hostname":          d.Hostname(),
		"name":              inst.Name,
		"launch_index":      0,
		"availability_zone": d.AZ,
	}
	if len(inst.Metadata) > 0 {
		md["meta"] = inst.Metadata
	}
	if kp := d.KeyPair; kp != nil {
		typ := kp.Type
		if typ == "" {
			typ = "ssh"
		}
		md["public_keys"] = map[string]string{kp.Name: kp.PublicKey}
		md["keys"] = []map[string]string{{"name": kp.Name, "type": typ, "data": kp.PublicKey}}
	}
	if atLeast(v, grizzly) {
		md["random_seed"] = randomSeed()
	}
	if atLeast(v, liberty) {
		md["project_id"] = inst.ProjectID
	}
	if atLeast(v, newtonOne) {
		md["devices"] = d.devices()
	}
	if atLeast(v, victoria) {
		md["dedicated_cpus"] = []int{}
	}
	return md
}

// randomSeed is 512 random bytes for the guest's entropy pool, fresh on
// every answer as in Nova.
func randomSeed() string {
	b := make([]byte, 512)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// devices are the tagged devices (Nova's device role tagging): the
// instance's tagged NICs.
func (d *InstanceData) devices() []map[string]any {
	out := []map[string]any{}
	for _, p := range d.Ports {
		if p.Tag == "" {
			continue
		}
		dev := map[string]any{"type": "nic", "bus": "pci", "address": "", "mac": p.MACAddress, "tags": []string{p.Tag}}
		out = append(out, dev)
	}
	return out
}

// Hostname is the guest's host name (see structs.Instance.GuestHostname)
// in Nova's default dhcp_domain, novalocal.
func (d *InstanceData) Hostname() string {
	return d.Instance.GuestHostname() + ".novalocal"
}

// networkData is network_data.json: a link per port, a network per
// fixed IP (static addresses, with the subnet's gateway as default route
// and its host routes), and the subnets' DNS servers as services — the
// shape of Nova's netutils.get_network_metadata.
func (d *InstanceData) networkData() map[string]any {
	links, networks, services := []any{}, []any{}, []any{}
	seenDNS := map[string]bool{}
	n := 0
	for _, p := range d.Ports {
		link := "tap" + truncate(p.ID, 11)
		mtu := any(nil)
		if net := d.Networks[p.NetworkID]; net != nil && net.MTU > 0 {
			mtu = net.MTU
		}
		links = append(links, map[string]any{"id": link, "vif_id": p.ID, "type": "bridge", "mtu": mtu,
			"ethernet_mac_address": p.MACAddress})
		for _, ip := range p.FixedIPs {
			sn := d.Subnets[ip.SubnetID]
			if sn == nil {
				continue
			}
			networks = append(networks, subnetNetwork(sn, ip.IPAddress, link, p.NetworkID, n))
			n++
			for _, dns := range sn.DNSNameservers {
				if !seenDNS[dns] {
					seenDNS[dns] = true
					services = append(services, map[string]any{"type": "dns", "address": dns})
				}
			}
		}
	}
	return map[string]any{"links": links, "networks": networks, "services": services}
}

// subnetNetwork is one networks entry of network_data.json.
func subnetNetwork(sn *structs.Subnet, addr, link, networkID string, n int) map[string]any {
	version := sn.IPVersion
	if version == 0 {
		version = 4
	}
	netmask := ""
	if _, ipn, err := net.ParseCIDR(sn.CIDR); err == nil {
		if version == 4 {
			netmask = net.IP(ipn.Mask).String()
		} else {
			ones, _ := ipn.Mask.Size()
			netmask = ipv6Netmask(ones)
		}
	}
	routes := []any{}
	if sn.GatewayIP != "" {
		dst, mask := "0.0.0.0", "0.0.0.0"
		if version == 6 {
			dst, mask = "::", "::"
		}
		routes = append(routes, map[string]any{"network": dst, "netmask": mask, "gateway": sn.GatewayIP})
	}
	for _, r := range sn.HostRoutes {
		if _, ipn, err := net.ParseCIDR(r.Destination); err == nil {
			mask := net.IP(ipn.Mask).String()
			if version == 6 {
				ones, _ := ipn.Mask.Size()
				mask = ipv6Netmask(ones)
			}
			routes = append(routes, map[string]any{"network": ipn.IP.String(), "netmask": mask, "gateway": r.NextHop})
		}
	}
	dns := []any{}
	for _, a := range sn.DNSNameservers {
		dns = append(dns, map[string]any{"type": "dns", "address": a})
	}
	return map[string]any{
		"id": fmt.Sprintf("network%d", n), "type": fmt.Sprintf("ipv%d", version), "link": link,
		"ip_address": addr, "netmask": netmask, "routes": routes, "network_id": networkID, "services": dns,
	}
}

// ipv6Netmask writes an IPv6 prefix length as a mask in address form
// (ffff:ffff:ffff:ffff::), as Nova's netaddr does.
func ipv6Netmask(ones int) string {
	return net.IP(net.CIDRMask(ones, 128)).String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
