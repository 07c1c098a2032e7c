package libvirt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// qemuRunDir is where libvirtd's QEMU driver writes the pid files of
// running domains (qemu:///system).
var qemuRunDir = "/run/libvirt/qemu"

// Diagnostics reads a RUNNING instance's counters from libvirtd: state
// and memory (DomainGetInfo, DomainMemoryStats), each vCPU's time
// (DomainGetVcpus), each disk's I/O (DomainBlockStats) and each NIC's
// traffic (DomainInterfaceStats), in both Nova's standardized shape and
// its older flat one (cpu0_time, memory, vda_read, tap…_rx, …). The
// uptime is that of the QEMU process, read from its pid file when
// libvirtd runs on this machine, else 0. Any other power state fails
// with virt.ErrInvalidState, as Nova's does.
func (d *Driver) Diagnostics(ctx context.Context, id string) (*virt.Diagnostics, error) {
	var out *virt.Diagnostics
	err := d.read(ctx, "Diagnostics", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		dom, err := d.lookup(lv, id)
		if err != nil {
			return err
		}
		m, err := d.meta(lv, dom)
		if err != nil {
			return fmt.Errorf("domain %s: %w", dom.Name, err)
		}
		s, err := d.state(lv, dom)
		if err != nil {
			return err
		}
		if s.power != virt.PowerRunning {
			return invalid("get the diagnostics of", s.power)
		}
		out, err = d.diagnostics(lv, dom, m)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// diagnostics gathers a running domain's counters.
func (d *Driver) diagnostics(lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta) (*virt.Diagnostics, error) {
	virtType, _, err := d.hostType(lv)
	if err != nil {
		return nil, err
	}
	_, maxMem, _, nrCPU, _, err := lv.DomainGetInfo(dom)
	if err != nil {
		return nil, fmt.Errorf("domain info: %w", err)
	}
	doc, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return nil, fmt.Errorf("read domain XML: %w", err)
	}
	var x libvirtxml.Domain
	if err := x.Unmarshal(doc); err != nil {
		return nil, fmt.Errorf("domain XML: %w", err)
	}
	dg := &virt.Diagnostics{
		State: "running", Driver: "libvirt", Hypervisor: virtType, HypervisorOS: "linux",
		ConfigDrive:   m.disk(diskConfig) != nil,
		UptimeSeconds: uptime(dom.Name),
		Raw:           map[string]int64{"memory": int64(maxMem)},
	}
	vcpus, _, err := lv.DomainGetVcpus(dom, int32(nrCPU), 0)
	if err != nil {
		return nil, fmt.Errorf("vcpu stats: %w", err)
	}
	for _, v := range vcpus {
		dg.CPUs = append(dg.CPUs, virt.CPUDiagnostics{ID: int(v.Number), TimeNS: v.CPUTime})
		dg.Raw[fmt.Sprintf("cpu%d_time", v.Number)] = int64(v.CPUTime)
	}
	dg.Memory = memoryDiagnostics(lv, dom, maxMem, dg.Raw)
	if x.Devices != nil {
		if err := diskDiagnostics(lv, dom, x.Devices.Disks, dg); err != nil {
			return nil, err
		}
		if err := nicDiagnostics(lv, dom, x.Devices.Interfaces, dg); err != nil {
			return nil, err
		}
	}
	return dg, nil
}

// memoryDiagnostics is the guest's memory size and use, in MiB: use is
// what the balloon driver says the guest uses when it reports it, else
// what the QEMU process holds (RSS). The statistics also go to raw as
// memory-<name>, in KiB, as Nova's.
func memoryDiagnostics(lv *golibvirt.Libvirt, dom golibvirt.Domain, maxKiB uint64, raw map[string]int64) virt.MemoryDiagnostics {
	md := virt.MemoryDiagnostics{MaximumMB: int64(maxKiB / 1024)}
	stats, err := lv.DomainMemoryStats(dom, uint32(golibvirt.DomainMemoryStatNr), 0)
	if err != nil {
		return md
	}
	names := map[golibvirt.DomainMemoryStatTags]string{
		golibvirt.DomainMemoryStatSwapIn: "swap_in", golibvirt.DomainMemoryStatSwapOut: "swap_out",
		golibvirt.DomainMemoryStatMajorFault: "major_fault", golibvirt.DomainMemoryStatMinorFault: "minor_fault",
		golibvirt.DomainMemoryStatUnused: "unused", golibvirt.DomainMemoryStatAvailable: "available",
		golibvirt.DomainMemoryStatActualBalloon: "actual", golibvirt.DomainMemoryStatRss: "rss",
	}
	got := map[golibvirt.DomainMemoryStatTags]uint64{}
	for _, st := range stats {
		tag := golibvirt.DomainMemoryStatTags(st.Tag)
		got[tag] = st.Val
		if name, ok := names[tag]; ok {
			raw["memory-"+name] = int64(st.Val)
		}
	}
	avail, okA := got[golibvirt.DomainMemoryStatAvailable]
	unused, okU := got[golibvirt.DomainMemoryStatUnused]
	switch {
	case okA && okU && avail >= unused:
		md.UsedMB = int64((avail - unused) / 1024)
	default:
		md.UsedMB = int64(min(got[golibvirt.DomainMemoryStatRss], maxKiB) / 1024)
	}
	return md
}

// diskDiagnostics adds the I/O counters of every disk with a target.
func diskDiagnostics(lv *golibvirt.Libvirt, dom golibvirt.Domain, disks []libvirtxml.DomainDisk, dg *virt.Diagnostics) error {
	for _, disk := range disks {
		if disk.Target == nil || disk.Target.Dev == "" || disk.Source == nil {
			continue
		}
		dev := disk.Target.Dev
		rdReq, rdBytes, wrReq, wrBytes, errs, err := lv.DomainBlockStats(dom, dev)
		if err != nil {
			return fmt.Errorf("block stats of %s: %w", dev, err)
		}
		dg.Disks = append(dg.Disks, virt.DiskDiagnostics{Device: dev, ReadBytes: rdBytes, ReadRequests: rdReq,
			WriteBytes: wrBytes, WriteRequests: wrReq, ErrorsCount: errs})
		dg.Raw[dev+"_read"], dg.Raw[dev+"_read_req"] = rdBytes, rdReq
		dg.Raw[dev+"_write"], dg.Raw[dev+"_write_req"] = wrBytes, wrReq
		dg.Raw[dev+"_errors"] = errs
	}
	return nil
}

// nicDiagnostics adds the traffic counters of every interface with a
// host device.
func nicDiagnostics(lv *golibvirt.Libvirt, dom golibvirt.Domain, ifaces []libvirtxml.DomainInterface, dg *virt.Diagnostics) error {
	for _, iface := range ifaces {
		if iface.Target == nil || iface.Target.Dev == "" {
			continue
		}
		dev := iface.Target.Dev
		rxB, rxP, rxE, rxD, txB, txP, txE, txD, err := lv.DomainInterfaceStats(dom, dev)
		if err != nil {
			return fmt.Errorf("interface stats of %s: %w", dev, err)
		}
		nd := virt.NICDiagnostics{Device: dev, RxOctets: rxB, RxPackets: rxP, RxErrors: rxE, RxDrop: rxD,
			TxOctets: txB, TxPackets: txP, TxErrors: txE, TxDrop: txD}
		if iface.MAC != nil {
			nd.MAC = iface.MAC.Address
		}
		dg.NICs = append(dg.NICs, nd)
		for k, v := range map[string]int64{"rx": rxB, "rx_packets": rxP, "rx_errors": rxE, "rx_drop": rxD,
			"tx": txB, "tx_packets": txP, "tx_errors": txE, "tx_drop": txD} {
			dg.Raw[dev+"_"+k] = v
		}
	}
	return nil
}

// uptime is how long a domain's QEMU process has run, from the time
// libvirtd wrote its pid file at the start; 0 when it cannot be read
// (libvirtd on another machine or in another mount namespace).
func uptime(domainName string) int64 {
	st, err := os.Stat(filepath.Join(qemuRunDir, domainName+".pid"))
	if err != nil {
		return 0
	}
	return max(int64(time.Since(st.ModTime())/time.Second), 0)
}
