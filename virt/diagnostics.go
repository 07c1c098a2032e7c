package virt

import "context"

// Diagnoser reports an instance's hypervisor-side diagnostics (Nova's
// server diagnostics): CPU, memory, disk and NIC counters. Only a
// RUNNING instance has them; other power states fail with the driver's
// invalid-state error.
type Diagnoser interface {
	Diagnostics(ctx context.Context, id string) (*Diagnostics, error)
}

// Diagnostics is a snapshot of one instance's counters, in the shape of
// Nova's standardized diagnostics (API microversion 2.48); Raw is the
// free-form view older microversions return.
type Diagnostics struct {
	// State is the power state's name: pending, running, paused,
	// shutdown, crashed or suspended.
	State string
	// Driver is the driver's name ("libvirt", "fake").
	Driver string
	// Hypervisor is the hypervisor type ("kvm", "qemu", "fake").
	Hypervisor string
	// HypervisorOS is the host's operating system ("linux").
	HypervisorOS string
	// UptimeSeconds is how long the guest has run since it last started.
	UptimeSeconds int64
	// ConfigDrive says whether the instance has a config drive.
	ConfigDrive bool
	CPUs        []CPUDiagnostics
	NICs        []NICDiagnostics
	Disks       []DiskDiagnostics
	Memory      MemoryDiagnostics
	// Raw is the driver's own flat view, name → value, as Nova before
	// 2.48 returns it (libvirt: cpu0_time, memory, vda_read, …).
	Raw map[string]int64
}

// CPUDiagnostics is one virtual CPU's counters.
type CPUDiagnostics struct {
	ID int
	// TimeNS is the CPU time it used, in nanoseconds.
	TimeNS uint64
	// Utilisation is its recent use in percent, nil when unknown.
	Utilisation *int
}

// NICDiagnostics is one network interface's counters; -1 (or nil for
// the rates) when the backend does not report one.
type NICDiagnostics struct {
	MAC                                   string
	RxOctets, RxErrors, RxDrop, RxPackets int64
	TxOctets, TxErrors, TxDrop, TxPackets int64
	RxRate, TxRate                        *int64
	Device                                string
}

// DiskDiagnostics is one disk's counters; ErrorsCount is -1 when the
// backend does not count errors.
type DiskDiagnostics struct {
	// Device is the guest's name for it (vda, sdb).
	Device                    string
	ReadBytes, ReadRequests   int64
	WriteBytes, WriteRequests int64
	ErrorsCount               int64
}

// MemoryDiagnostics is the guest's memory in MiB: its size and what it
// uses (0 when the backend cannot tell).
type MemoryDiagnostics struct {
	MaximumMB, UsedMB int64
}
