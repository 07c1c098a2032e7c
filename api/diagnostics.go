package api

import (
	"net/http"
	"net/url"
)

// Diagnostics are a running instance's hypervisor counters, as its host's
// driver reads them (GET /v1/instances/{id}/diagnostics).
type Diagnostics struct {
	State         string
	Driver        string
	Hypervisor    string
	HypervisorOS  string
	UptimeSeconds int64
	ConfigDrive   bool
	CPUs          []struct {
		ID          int
		TimeNS      uint64
		Utilisation *int
	}
	NICs []struct {
		MAC, Device                           string
		RxOctets, RxErrors, RxDrop, RxPackets int64
		TxOctets, TxErrors, TxDrop, TxPackets int64
	}
	Disks []struct {
		Device                    string
		ReadBytes, ReadRequests   int64
		WriteBytes, WriteRequests int64
		ErrorsCount               int64
	}
	Memory struct{ MaximumMB, UsedMB int64 }
	// Raw is the driver's own flat view, name → value.
	Raw map[string]int64
}

// Diagnostics reads a running instance's counters (admin only).
func (i *Instances) Diagnostics(id string) (*Diagnostics, error) {
	var out Diagnostics
	if _, err := i.c.doJSON(&request{method: http.MethodGet, path: "/v1/instances/" + url.PathEscape(id) + "/diagnostics"},
		nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
