package client

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// fingerprint asks the driver about the host and builds its record.
func (c *Client) fingerprint() (*structs.Host, error) {
	info, err := c.driver.HostInfo(c.ctx)
	if err != nil {
		return nil, fmt.Errorf("fingerprint host: %w", err)
	}
	if info == nil {
		return nil, fmt.Errorf("fingerprint host: driver %s returned no host info", c.driver.Name())
	}
	h := buildHost(&c.cfg, c.hostID, c.driver.Name(), hostCapabilities(c.driver.Capabilities()), info)
	if _, ok := c.driver.(virt.DiskMover); ok && c.cfg.DiskExportURL != "" {
		h.Attributes[structs.HostAttrDiskExportURL] = c.cfg.DiskExportURL
	}
	if c.cfg.StorageCapacityGB > 0 {
		// A storage host: the leader places volumes on it.
		h.Capabilities = slices.Sorted(slices.Values(append(h.Capabilities, structs.HostCapabilityVolumes)))
		h.Attributes[structs.HostAttrStorageCapacityGB] = strconv.FormatInt(c.cfg.StorageCapacityGB, 10)
		if c.cfg.StorageNBDAddress != "" {
			h.Attributes[structs.HostAttrStorageNBDAddress] = c.cfg.StorageNBDAddress
		}
		if c.cfg.StorageBackend != "" {
			h.Attributes[structs.HostAttrStorageBackend] = c.cfg.StorageBackend
		}
		if c.cfg.StorageBackendName != "" {
			h.Attributes[structs.HostAttrStorageBackendName] = c.cfg.StorageBackendName
		}
	}
	return h, nil
}

// hostCapabilities lists, sorted, the HostCapability* values a driver's
// capabilities grant: the servers refuse an operation on a host whose
// driver cannot do it instead of failing it on the agent.
func hostCapabilities(caps virt.Capabilities) []string {
	var out []string
	for _, c := range []struct {
		on   bool
		name string
	}{
		{caps.Pause, structs.HostCapabilityPause},
		{caps.Suspend, structs.HostCapabilitySuspend},
		{caps.Rescue, structs.HostCapabilityRescue},
		{caps.Resize, structs.HostCapabilityResize},
		{caps.Migrate, structs.HostCapabilityMigrate},
		{caps.LiveMigrate, structs.HostCapabilityLiveMigrate},
		{caps.Snapshot, structs.HostCapabilitySnapshot},
		{caps.ConsoleOutput, structs.HostCapabilityConsole},
		{caps.CrashDump, structs.HostCapabilityCrashDump},
		{caps.SetPassword, structs.HostCapabilityPassword},
	} {
		if c.on {
			out = append(out, c.name)
		}
	}
	slices.Sort(out)
	return out
}

// buildHost turns a driver's fingerprint and capabilities (HostCapability*
// values) into the host record the agent registers. Usage, BuildFailures
// and the status timestamps are the servers' to keep and stay zero.
func buildHost(cfg *Config, hostID, driverName string, caps []string, info *virt.HostInfo) *structs.Host {
	name := cfg.HostName
	if name == "" {
		name = info.Hostname
	}
	if name == "" {
		name = cfg.NodeName
	}
	h := &structs.Host{
		ID:                hostID,
		Name:              name,
		Region:            cfg.Region,
		AZ:                cfg.AZ,
		Status:            structs.HostStatusInit,
		Enabled:           true,
		GossipMember:      cfg.NodeName,
		TunnelIP:          cfg.TunnelIP,
		Driver:            driverName,
		HypervisorType:    info.HypervisorType,
		HypervisorVersion: info.HypervisorVersion,
		Arch:              info.Arch,
		Inventories: map[string]*structs.Inventory{
			structs.ResourceVCPU:     inventory(info.VCPUs, cfg.ReservedVCPUs, cfg.CPUAllocationRatio),
			structs.ResourceMemoryMB: inventory(info.MemoryMB, min(cfg.ReservedMemoryMB, info.MemoryMB/2), cfg.RAMAllocationRatio),
			structs.ResourceDiskGB:   inventory(info.DiskGB, cfg.ReservedDiskGB, cfg.DiskAllocationRatio),
		},
		Attributes:   maps.Clone(info.Attributes),
		Capabilities: caps,
	}
	for class, n := range info.CustomResources {
		if !strings.HasPrefix(class, "CUSTOM_") {
			class = "CUSTOM_" + strings.ToUpper(class)
		}
		h.Inventories[class] = inventory(n, 0, 1.0)
	}
	if len(info.Traits) > 0 {
		h.Traits = slices.Compact(slices.Sorted(slices.Values(info.Traits)))
	}
	if h.Attributes == nil {
		h.Attributes = make(map[string]string)
	}
	for k, v := range map[string]string{
		"arch":            info.Arch,
		"hypervisor_type": info.HypervisorType,
		"cpu_model":       info.CPUModel,
	} {
		if v != "" {
			h.Attributes[k] = v
		}
	}
	return h
}

// inventory is one resource class in Placement's model: whole units from
// 1 up to the host's total, with reserved clamped to [0, total].
func inventory(total, reserved int64, ratio float64) *structs.Inventory {
	total = max(total, 0)
	return &structs.Inventory{
		Total:           total,
		Reserved:        min(max(reserved, 0), total),
		MinUnit:         1,
		MaxUnit:         total,
		StepSize:        1,
		AllocationRatio: ratio,
	}
}

// sameHost reports whether two fingerprints would register the same record.
func sameHost(a, b *structs.Host) bool {
	return reflect.DeepEqual(a, b)
}
