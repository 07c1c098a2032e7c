package nova

import (
	"context"
	"net/http"

	"github.com/stratus-cloud/stratus/agent/console"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/virt"
)

// diagnosticsRule is Nova's policy rule of server diagnostics.
const diagnosticsRule = "os_compute_api:os-server-diagnostics"

// diagnosticsMV is the microversion of the standardized shape.
const diagnosticsMV = 48

// Diagnoser is what the console service offers for diagnostics: it finds
// the agent that hosts the instance, as for console output.
type Diagnoser interface {
	Diagnostics(ctx context.Context, instanceID string) (*virt.Diagnostics, error)
}

// diagnosticsRoutes are GET /servers/{id}/diagnostics, admin-only by
// default as in Nova.
func (a *API) diagnosticsRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/diagnostics", Access: admin, Policy: diagnosticsRule, Handle: a.serverDiagnostics},
	}
}

// serverDiagnostics answers GET /servers/{id}/diagnostics: the
// hypervisor's counters of a running server, free-form before 2.48 and
// standardized from it. A server that is not running is 409, as Nova's
// InstanceInvalidState; a driver without diagnostics 501.
func (a *API) serverDiagnostics(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	// Nova checks the host before asking its driver.
	if inst.HostID == "" {
		return nil, faultf(http.StatusConflict, "Instance %s is not ready", inst.ID)
	}
	dgs, ok := a.consoles.(Diagnoser)
	if !ok || a.consoles == nil {
		return nil, notSupported()
	}
	if inst.PowerState != virt.PowerRunning {
		return nil, faultf(http.StatusConflict, "Cannot 'get_diagnostics' instance %s while it is in power_state %d",
			inst.ID, inst.PowerState)
	}
	dg, err := dgs.Diagnostics(q.r.Context(), inst.ID)
	switch {
	case err == nil:
	case console.IsNotReady(err):
		return nil, faultf(http.StatusConflict, "Cannot 'get_diagnostics' instance %s while it is in power_state %d: %v",
			inst.ID, inst.PowerState, err)
	default:
		return nil, consoleFault(err, inst.ID)
	}
	if q.mv < diagnosticsMV {
		return okReply(dg.Raw)
	}
	return okReply(diagnosticsView(dg))
}

// diagnosticsView is the 2.48 shape.
func diagnosticsView(dg *virt.Diagnostics) map[string]any {
	cpus := []any{}
	for _, c := range dg.CPUs {
		var util any
		if c.Utilisation != nil {
			util = *c.Utilisation
		}
		cpus = append(cpus, map[string]any{"id": c.ID, "time": c.TimeNS, "utilisation": util})
	}
	nics := []any{}
	for _, n := range dg.NICs {
		nics = append(nics, map[string]any{"mac_address": n.MAC,
			"rx_octets": n.RxOctets, "rx_errors": n.RxErrors, "rx_drop": n.RxDrop, "rx_packets": n.RxPackets, "rx_rate": n.RxRate,
			"tx_octets": n.TxOctets, "tx_errors": n.TxErrors, "tx_drop": n.TxDrop, "tx_packets": n.TxPackets, "tx_rate": n.TxRate})
	}
	disks := []any{}
	for _, d := range dg.Disks {
		disks = append(disks, map[string]any{"read_bytes": d.ReadBytes, "read_requests": d.ReadRequests,
			"write_bytes": d.WriteBytes, "write_requests": d.WriteRequests, "errors_count": d.ErrorsCount})
	}
	return map[string]any{
		"state": dg.State, "driver": novaDriver(dg.Driver), "hypervisor": dg.Hypervisor, "hypervisor_os": dg.HypervisorOS,
		"uptime": dg.UptimeSeconds, "config_drive": dg.ConfigDrive,
		"num_cpus": len(dg.CPUs), "num_nics": len(dg.NICs), "num_disks": len(dg.Disks),
		"cpu_details": cpus, "nic_details": nics, "disk_details": disks,
		"memory_details": map[string]any{"maximum": dg.Memory.MaximumMB, "used": dg.Memory.UsedMB},
	}
}

// novaDrivers is Nova's HypervisorDriver enum, the only values 2.48's
// driver may take (clients and tempest's schema check it).
var novaDrivers = []string{"libvirt", "xenapi", "vmwareapi", "ironic", "hyperv"}

// novaDriver is a driver's name in Nova's enum. Any other driver (the
// fake) reports libvirt, as Nova's fake driver does.
func novaDriver(name string) string {
	if containsString(novaDrivers, name) {
		return name
	}
	return "libvirt"
}
