package fake

import (
	"context"
	"fmt"

	"github.com/stratus-cloud/stratus/virt"
)

var _ virt.Diagnoser = (*Driver)(nil)

func init() { ops["Diagnostics"] = true }

// Diagnostics returns made-up but deterministic counters of a RUNNING
// instance, derived from its flavor, NICs, disks and boot count; any
// other power state fails with virt.ErrInvalidState.
func (d *Driver) Diagnostics(ctx context.Context, id string) (*virt.Diagnostics, error) {
	var out *virt.Diagnostics
	err := d.withInstance(ctx, "Diagnostics", id, 0, func(in *instance) error {
		if in.power != virt.PowerRunning {
			return invalid(in, "get the diagnostics of")
		}
		out = fakeDiagnostics(in, d.cfg.HypervisorType)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fakeDiagnostics renders an instance's counters; callers hold d.mu.
func fakeDiagnostics(in *instance, hypervisor string) *virt.Diagnostics {
	s := &in.spec
	k := int64(in.n + in.boots)
	dg := &virt.Diagnostics{
		State: "running", Driver: "fake", Hypervisor: hypervisor, HypervisorOS: "linux",
		UptimeSeconds: 60 * k, ConfigDrive: len(s.ConfigDrive) > 0,
		Memory: virt.MemoryDiagnostics{MaximumMB: int64(s.MemoryMB), UsedMB: int64(s.MemoryMB) / 2},
		Raw:    map[string]int64{"memory": int64(s.MemoryMB) * 1024},
	}
	for i := range max(s.VCPUs, 1) {
		u := 10
		ns := uint64(k) * uint64(i+1) * 1_000_000_000
		dg.CPUs = append(dg.CPUs, virt.CPUDiagnostics{ID: i, TimeNS: ns, Utilisation: &u})
		dg.Raw[fmt.Sprintf("cpu%d_time", i)] = int64(ns)
	}
	devs := []string{"vda"}
	if s.EphemeralGB > 0 {
		devs = append(devs, "vdb")
	}
	if s.SwapMB > 0 {
		devs = append(devs, fmt.Sprintf("vd%c", 'a'+len(devs)))
	}
	for i, dev := range devs {
		r := k * int64(i+1)
		dd := virt.DiskDiagnostics{Device: dev, ReadBytes: r * 262144, ReadRequests: r * 112,
			WriteBytes: r * 65536, WriteRequests: r * 48, ErrorsCount: 0}
		dg.Disks = append(dg.Disks, dd)
		dg.Raw[dev+"_read"], dg.Raw[dev+"_read_req"] = dd.ReadBytes, dd.ReadRequests
		dg.Raw[dev+"_write"], dg.Raw[dev+"_write_req"] = dd.WriteBytes, dd.WriteRequests
		dg.Raw[dev+"_errors"] = dd.ErrorsCount
	}
	for i, nic := range s.NICs {
		r := k * int64(i+1)
		tap := "tap" + nic.PortID
		if len(tap) > 14 {
			tap = tap[:14]
		}
		nd := virt.NICDiagnostics{MAC: nic.MAC, Device: tap, RxOctets: r * 20701, RxPackets: r * 267,
			TxOctets: r * 1402, TxPackets: r * 66}
		dg.NICs = append(dg.NICs, nd)
		dg.Raw[tap+"_rx"], dg.Raw[tap+"_rx_packets"] = nd.RxOctets, nd.RxPackets
		dg.Raw[tap+"_rx_errors"], dg.Raw[tap+"_rx_drop"] = 0, 0
		dg.Raw[tap+"_tx"], dg.Raw[tap+"_tx_packets"] = nd.TxOctets, nd.TxPackets
		dg.Raw[tap+"_tx_errors"], dg.Raw[tap+"_tx_drop"] = 0, 0
	}
	return dg
}
