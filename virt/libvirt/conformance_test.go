package libvirt_test

import (
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/virttest"
)

// TestConformance runs the virt conformance suite on real QEMU domains:
// each subtest gets a driver in a namespace of its own.
func TestConformance(t *testing.T) {
	t.Parallel()
	needLibvirtd(t)
	virttest.Run(t, virttest.Harness{
		New: func(t *testing.T) virt.Driver {
			return newEnv(t, nil).drv
		},
		Spec: func(t *testing.T, id string) *virt.InstanceSpec {
			return tinySpec(id)
		},
		Timeout: time.Minute,
	})
}
