package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

func TestDiagnostics(t *testing.T) {
	ctx := context.Background()
	d := fake.New(fake.Config{})
	spec := smallSpec("dg")
	spec.VCPUs, spec.EphemeralGB = 2, 1
	spec.NICs = []virt.NIC{{PortID: "0123456789abcdef", MAC: "fa:16:3e:00:00:01", Bridge: "br0"}}
	if _, err := d.Spawn(ctx, spec); err != nil {
		t.Fatal(err)
	}
	dg, err := d.Diagnostics(ctx, "dg")
	if err != nil {
		t.Fatal(err)
	}
	if dg.State != "running" || dg.Driver != "fake" || len(dg.CPUs) != 2 || len(dg.Disks) != 2 || len(dg.NICs) != 1 ||
		dg.Memory.MaximumMB != 512 || dg.UptimeSeconds <= 0 || dg.NICs[0].MAC != "fa:16:3e:00:00:01" {
		t.Fatalf("diagnostics %+v", dg)
	}
	for _, k := range []string{"cpu0_time", "cpu1_time", "memory", "vda_read", "vdb_write_req", "tap0123456789a_rx"} {
		if _, ok := dg.Raw[k]; !ok {
			t.Errorf("raw diagnostics lack %s: %v", k, dg.Raw)
		}
	}
	if err := d.PowerOff(ctx, "dg", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Diagnostics(ctx, "dg"); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("Diagnostics of a stopped instance = %v", err)
	}
	if _, err := d.Diagnostics(ctx, "nope"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("Diagnostics of an unknown instance = %v", err)
	}
}
