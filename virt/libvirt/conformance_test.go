package libvirt_test

import (
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
	"github.com/stratus-cloud/stratus/virt/virttest"
)

// TestConformance runs the virt conformance suite on real QEMU domains:
// each subtest gets a driver in a namespace of its own.
func TestConformance(t *testing.T) {
	t.Parallel()
	needLibvirtd(t)
	// Live migrations go to a peer libvirtd on this machine (shared
	// storage); it is stopped, with whatever arrived there, at the end.
	peer := libvirtpeer.Start(t)
	virttest.Run(t, virttest.Harness{
		New: func(t *testing.T) virt.Driver {
			return newEnv(t, func(c *libvirt.Config) {
				c.MigrationURI, c.SharedStorage = peer.HostURI, true
			}).drv
		},
		Spec: func(t *testing.T, id string) *virt.InstanceSpec {
			return tinySpec(id)
		},
		Timeout:              time.Minute,
		MigrationDestination: peer.URI,
	})
}
