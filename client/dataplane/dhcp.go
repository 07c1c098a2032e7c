package dataplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// leaseSeconds is how long dnsmasq's leases last (Neutron's default
// dhcp_lease_duration).
const leaseSeconds = 86400

// dhcpDir is where a network's dnsmasq keeps its files.
func (p *Plane) dhcpDir(networkID string) string {
	return filepath.Join(p.cfg.StateDir, "dhcp", networkID)
}

// dhcpSubnets are the subnets of a network dnsmasq serves: DHCP on,
// with a gateway (the bridge's address in it, which dnsmasq answers
// from), and for IPv6 stateful or stateless DHCPv6.
func dhcpSubnets(n *Network) []Subnet {
	var out []Subnet
	for _, s := range n.Subnets {
		if !s.DHCP || s.GatewayIP == "" {
			continue
		}
		if s.IPVersion == 6 && s.IPv6AddressMode == "slaac" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// dnsmasqArgs is the command line of a network's dnsmasq; a change of
// it restarts dnsmasq, a change of the hosts or options files only
// reloads it.
func (p *Plane) dnsmasqArgs(n *Network, subnets []Subnet) []string {
	dir := p.dhcpDir(n.ID)
	args := []string{
		// It stays root: its files live in the agent's data dir, which
		// the dnsmasq user may not be able to read (it re-reads the
		// hosts and options files on every reload).
		"--conf-file=/dev/null", "--user=root", "--no-hosts", "--no-resolv", "--port=0",
		"--bind-interfaces", "--interface=" + BridgeName(n.ID), "--except-interface=lo",
		"--pid-file=" + filepath.Join(dir, "pid"),
		"--dhcp-hostsfile=" + filepath.Join(dir, "host"),
		"--dhcp-optsfile=" + filepath.Join(dir, "opts"),
		"--dhcp-leasefile=" + filepath.Join(dir, "leases"),
		"--dhcp-authoritative", "--dhcp-no-override",
		"--log-facility=" + filepath.Join(dir, "log"),
	}
	if opt := mtuOption(n, subnets); opt != "" {
		args = append(args, opt)
	}
	for _, s := range subnets {
		pfx, _ := netip.ParsePrefix(s.CIDR)
		tag := "set:" + subnetTag(s.ID)
		if s.IPVersion == 6 {
			mode := "static"
			if s.IPv6AddressMode == "dhcpv6-stateless" {
				mode = "static,ra-stateless"
			}
			args = append(args, fmt.Sprintf("--dhcp-range=%s,%s,%s,%d,%ds", tag, pfx.Addr(), mode, pfx.Bits(), leaseSeconds))
			continue
		}
		args = append(args, fmt.Sprintf("--dhcp-range=%s,%s,static,%s,%ds", tag, pfx.Addr(), prefixMask(pfx), leaseSeconds))
	}
	return args
}

// mtuOption advertises the network's MTU (DHCP option 26,
// interface-mtu) to every DHCPv4 client, asked for or not: a guest that
// does not ask (busybox's udhcpc, some images' dhclient) would otherwise
// keep 1500 bytes on a VXLAN network whose MTU is 50 less, and lose
// every full-sized packet. On the command line, a change of the MTU
// restarts dnsmasq. "" when the network has no MTU or no IPv4 subnet.
func mtuOption(n *Network, subnets []Subnet) string {
	if n.MTU <= 0 {
		return ""
	}
	for _, s := range subnets {
		if s.IPVersion == 4 {
			return fmt.Sprintf("--dhcp-option-force=26,%d", n.MTU)
		}
	}
	return ""
}

// subnetTag is dnsmasq's tag of a subnet (tags may not start with a
// digit in every dnsmasq version).
func subnetTag(id string) string { return "subnet-" + id }

// prefixMask is an IPv4 prefix's netmask.
func prefixMask(p netip.Prefix) string {
	m := uint32(0)
	if p.Bits() > 0 {
		m = ^uint32(0) << (32 - p.Bits())
	}
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&0xff, m>>8&0xff, m&0xff)
}

// hostsFile is the dhcp-hostsfile: a static entry per port address on
// a served subnet (MAC, address, hostname).
func hostsFile(n *Network, subnets []Subnet, ports []Port) []byte {
	var b bytes.Buffer
	for _, port := range ports {
		if port.NetworkID != n.ID {
			continue
		}
		for _, ip := range port.IPs {
			a, err := netip.ParseAddr(ip)
			if err != nil || !servedBy(a, subnets) {
				continue
			}
			addr := ip
			if a.Is6() {
				addr = "[" + ip + "]"
			}
			fmt.Fprintf(&b, "%s,%s,%s\n", strings.ToLower(port.MAC), addr, port.hostname(ip))
		}
	}
	return b.Bytes()
}

// servedBy reports whether a lies in one of the subnets.
func servedBy(a netip.Addr, subnets []Subnet) bool {
	for _, s := range subnets {
		if pfx, err := netip.ParsePrefix(s.CIDR); err == nil && pfx.Contains(a) {
			return true
		}
	}
	return false
}

// optsFile is the dhcp-optsfile: per subnet its router, DNS servers and
// host routes (classless static routes, with the default route first
// when there is a gateway, as RFC 3442 makes clients ignore the router
// option). The MTU is on the command line (mtuOption): the optsfile
// cannot force an option.
func optsFile(subnets []Subnet) []byte {
	var b bytes.Buffer
	for _, s := range subnets {
		tag := "tag:" + subnetTag(s.ID)
		if s.IPVersion == 6 {
			if len(s.DNS) > 0 {
				fmt.Fprintf(&b, "%s,option6:dns-server,%s\n", tag, bracketAll(s.DNS))
			}
			continue
		}
		fmt.Fprintf(&b, "%s,option:router,%s\n", tag, s.GatewayIP)
		if len(s.DNS) > 0 {
			fmt.Fprintf(&b, "%s,option:dns-server,%s\n", tag, strings.Join(s.DNS, ","))
		}
		if len(s.Routes) > 0 {
			routes := []string{"0.0.0.0/0," + s.GatewayIP}
			for _, r := range s.Routes {
				routes = append(routes, r.Destination+","+r.NextHop)
			}
			fmt.Fprintf(&b, "%s,option:classless-static-route,%s\n", tag, strings.Join(routes, ","))
		}
	}
	return b.Bytes()
}

func bracketAll(addrs []string) string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = "[" + a + "]"
	}
	return strings.Join(out, ",")
}

// ensureDHCP runs (or reloads, or restarts) a network's dnsmasq so it
// serves the network's ports; a network without served subnets gets
// none.
func (p *Plane) ensureDHCP(ctx context.Context, n *Network, ports []Port) error {
	subnets := dhcpSubnets(n)
	if len(subnets) == 0 {
		return p.stopDHCP(ctx, n.ID)
	}
	dir := p.dhcpDir(n.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dhcp dir of network %s: %w", n.ID, err)
	}
	args := p.dnsmasqArgs(n, subnets)
	filesChanged := false
	for name, data := range map[string][]byte{"host": hostsFile(n, subnets, ports), "opts": optsFile(subnets)} {
		changed, err := writeIfChanged(filepath.Join(dir, name), data)
		if err != nil {
			return err
		}
		filesChanged = filesChanged || changed
	}
	argsFile := []byte(strings.Join(args, "\n") + "\n")
	argsChanged, err := writeIfChanged(filepath.Join(dir, "args"), argsFile)
	if err != nil {
		return err
	}
	pid := p.dnsmasqPID(n.ID)
	switch {
	case pid != 0 && !argsChanged:
		if filesChanged {
			if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
				return fmt.Errorf("reload dnsmasq of network %s: %w", n.ID, err)
			}
		}
		return nil
	case pid != 0:
		if err := p.stopDHCP(ctx, n.ID); err != nil {
			return err
		}
		// stopDHCP removed the directory; write the files again.
		return p.ensureDHCP(ctx, n, ports)
	}
	if _, err := p.run.run(ctx, "dnsmasq", args...); err != nil {
		_ = os.Remove(filepath.Join(dir, "args"))
		return fmt.Errorf("start dnsmasq of network %s: %w", n.ID, err)
	}
	return nil
}

// writeIfChanged writes data to path unless it already holds it.
func writeIfChanged(path string, data []byte) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// dnsmasqPID is the pid of the network's running dnsmasq, 0 when none
// runs. A pid from the file counts only if that process is a dnsmasq
// with this network's pid file, so a reused pid is never signalled.
func (p *Plane) dnsmasqPID(networkID string) int {
	pidFile := filepath.Join(p.dhcpDir(networkID), "pid")
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		return 0
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || !bytes.Contains(cmdline, []byte("--pid-file="+pidFile+"\x00")) {
		return 0
	}
	if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		// A zombie (state Z) is as good as gone.
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return 0
		}
	}
	return pid
}

// stopDHCP stops a network's dnsmasq (waiting until it is gone) and
// removes its files.
func (p *Plane) stopDHCP(ctx context.Context, networkID string) error {
	if pid := p.dnsmasqPID(networkID); pid != 0 {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop dnsmasq of network %s: %w", networkID, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for p.dnsmasqPID(networkID) != 0 {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if err := os.RemoveAll(p.dhcpDir(networkID)); err != nil {
		return fmt.Errorf("remove dhcp files of network %s: %w", networkID, err)
	}
	return nil
}

// dhcpNetworks lists the networks that have DHCP files here.
func (p *Plane) dhcpNetworks() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(p.cfg.StateDir, "dhcp"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list dhcp dirs: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
