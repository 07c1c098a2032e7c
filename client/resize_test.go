package client

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// addMoveDest adds, as the servers do for a resize whose destination is
// the source's host, a second allocation of instanceID on hostID with
// flavor f, desired running (the source has stopped).
func (s *fakeServer) addMoveDest(hostID, instanceID string, f *structs.Flavor) *structs.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.bump()
	s.seq++
	a := &structs.Allocation{
		ID: fmt.Sprintf("alloc-%03d", s.seq), InstanceID: instanceID, HostID: hostID, Flavor: f,
		DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending,
		CreateIndex: idx, ModifyIndex: idx, AllocModifyIndex: idx,
	}
	s.allocs[a.ID] = a
	return a.Copy()
}

// sameHostResize runs a resize onto the instance's own host up to
// VERIFY_RESIZE: the source stopped, the destination running with flavor
// f. It returns the source's and the destination's allocations.
func sameHostResize(t *testing.T, h *harness, c *Client, f *structs.Flavor) (src, dest *structs.Allocation) {
	t.Helper()
	src = h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, src.ID, structs.AllocClientRunning)
	h.srv.setDesired(src.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, src.ID, structs.AllocClientStopped)
	dest = h.srv.addMoveDest(c.HostID(), src.InstanceID, f)
	return src, dest
}

var bigFlavor = &structs.Flavor{ID: "3", Name: "m1.medium", VCPUs: 4, MemoryMB: 4096, RootGB: 40, EphemeralGB: 2, SwapMB: 1024}

// TestSameHostResizeInPlace: the destination of a resize onto the same
// host resizes the instance in place (the driver's Resizer: disks grow,
// the guest keeps its data) instead of re-attaching to it unchanged, and
// boots it; a revert gives it its CPUs, memory and swap back, its disks
// keeping their grown size, and hands it to the source.
func TestSameHostResizeInPlace(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	src, dest := sameHostResize(t, h, c, bigFlavor)
	id := src.InstanceID
	got := waitState(t, h.srv, dest.ID, structs.AllocClientRunning)
	if got.PowerState != virt.PowerRunning {
		t.Fatalf("destination reported %+v", got)
	}
	spec, _ := h.fake.Spec(id)
	if spec.VCPUs != 4 || spec.MemoryMB != 4096 || spec.RootGB != 40 || spec.EphemeralGB != 2 || spec.SwapMB != 1024 {
		t.Fatalf("spec after the resize: %+v", spec)
	}
	if n := h.fake.Calls("Spawn"); n != 1 {
		t.Errorf("%d spawns, want the source's only", n)
	}
	if n := h.fake.Calls("Resize"); n != 1 {
		t.Errorf("%d resizes, want 1", n)
	}
	// The source, desired stopped, leaves what the destination runs
	// alone, power syncs and all.
	h.waitSyncs(3)
	if power(h.fake, id) != virt.PowerRunning || h.fake.Calls("PowerOff") != 1 {
		t.Fatalf("during the verify: power %d, %d power-offs (want the source's stop only)", power(h.fake, id), h.fake.Calls("PowerOff"))
	}

	// Revert: the destination goes, the instance stays, resized back.
	h.srv.setDesired(dest.ID, structs.AllocDesiredDeleted)
	waitState(t, h.srv, dest.ID, structs.AllocClientDeleted)
	spec, err := h.fake.Spec(id)
	if err != nil {
		t.Fatalf("the instance went with the destination: %v", err)
	}
	if spec.VCPUs != 2 || spec.MemoryMB != 2048 || spec.SwapMB != 512 || spec.RootGB != 40 || spec.EphemeralGB != 2 {
		t.Errorf("spec after the revert: %+v, want the old CPUs, memory and swap, the grown disks", spec)
	}
	if h.fake.Calls("Destroy") != 0 {
		t.Error("the revert destroyed the instance")
	}
	h.srv.setDesired(src.ID, structs.AllocDesiredRunning)
	waitState(t, h.srv, src.ID, structs.AllocClientRunning)
	if power(h.fake, id) != virt.PowerRunning {
		t.Error("the source did not boot the instance again")
	}
}

// TestSameHostResizeConfirm: a confirm drops the source, and the
// instance stays, resized, with the destination.
func TestSameHostResizeConfirm(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	src, dest := sameHostResize(t, h, c, bigFlavor)
	waitState(t, h.srv, dest.ID, structs.AllocClientRunning)
	h.srv.setDesired(src.ID, structs.AllocDesiredDeleted)
	waitState(t, h.srv, src.ID, structs.AllocClientDeleted)
	spec, err := h.fake.Spec(src.InstanceID)
	if err != nil || spec.VCPUs != 4 || spec.RootGB != 40 {
		t.Fatalf("after the confirm: %+v, %v", spec, err)
	}
	if h.fake.Calls("Destroy") != 0 || power(h.fake, src.InstanceID) != virt.PowerRunning {
		t.Errorf("%d destroys, power %d", h.fake.Calls("Destroy"), power(h.fake, src.InstanceID))
	}
}

// TestSameHostResizeRefused: a driver that refuses the resize (a smaller
// disk, which the servers never send) fails the destination only; the
// instance is left to the source as it was.
func TestSameHostResizeRefused(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	small := &structs.Flavor{ID: "0", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512, RootGB: 1}
	src, dest := sameHostResize(t, h, c, small)
	got := waitState(t, h.srv, dest.ID, structs.AllocClientFailed)
	if !strings.Contains(got.ClientDescription, "resize failed") || !strings.Contains(got.ClientDescription, "unable to resize disk down") {
		t.Errorf("destination reported %+v", got)
	}
	spec, err := h.fake.Spec(src.InstanceID)
	if err != nil || spec.VCPUs != 2 || spec.RootGB != 20 {
		t.Fatalf("instance after the refusal: %+v, %v", spec, err)
	}
	if h.fake.Calls("Destroy") != 0 {
		t.Error("the failed destination destroyed the instance")
	}
}

// resizeHang is a driver whose Resize takes effect and then hangs until
// the agent shuts down, as when the agent dies right after the
// hypervisor acted.
type resizeHang struct {
	*fake.Driver
	done atomic.Bool
}

func (d *resizeHang) Resize(ctx context.Context, id string, spec *virt.InstanceSpec) error {
	if err := d.Driver.Resize(ctx, id, spec); err != nil || d.done.Load() {
		return err
	}
	d.done.Store(true)
	<-ctx.Done()
	return ctx.Err()
}

// TestSameHostResizeResumesAfterRestart: an agent that stops after the
// in-place resize took effect, before it recorded it, leaves the next
// agent to finish: the destination comes up with the new flavor, and a
// revert still knows the flavor to go back to.
func TestSameHostResizeResumesAfterRestart(t *testing.T) {
	h := newHarness(t, fake.Config{})
	d := &resizeHang{Driver: h.fake}
	h.driver = d
	c := h.start()
	src, dest := sameHostResize(t, h, c, bigFlavor)
	waitFor(t, "the resize", d.done.Load)
	shutdown(t, c)
	st, _, _ := openAndRead(t, h.dir, dest.ID)
	if st.Spawned || st.ResizedFrom != (flavorSize{VCPUs: 2, MemoryMB: 2048, RootGB: 20, EphemeralGB: 1, SwapMB: 512}) {
		t.Fatalf("state after the resize: %+v", st)
	}

	h.driver = h.fake
	h.start()
	waitState(t, h.srv, dest.ID, structs.AllocClientRunning)
	if spec, _ := h.fake.Spec(src.InstanceID); spec.VCPUs != 4 || spec.RootGB != 40 {
		t.Fatalf("spec after the restart: %+v", spec)
	}
	h.srv.setDesired(dest.ID, structs.AllocDesiredDeleted)
	waitState(t, h.srv, dest.ID, structs.AllocClientDeleted)
	if spec, _ := h.fake.Spec(src.InstanceID); spec.VCPUs != 2 || spec.MemoryMB != 2048 || spec.RootGB != 40 {
		t.Errorf("spec after the revert: %+v", spec)
	}
}

// TestSameHostResizeTwice: the destination of a confirmed resize is the
// source of the next; when that one is confirmed in turn, it goes
// without resizing the instance back.
func TestSameHostResizeTwice(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	src, dest := sameHostResize(t, h, c, bigFlavor)
	waitState(t, h.srv, dest.ID, structs.AllocClientRunning)
	h.srv.setDesired(src.ID, structs.AllocDesiredDeleted)
	waitState(t, h.srv, src.ID, structs.AllocClientDeleted)

	h.srv.setDesired(dest.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, dest.ID, structs.AllocClientStopped)
	huge := &structs.Flavor{ID: "4", Name: "m1.large", VCPUs: 8, MemoryMB: 8192, RootGB: 80, EphemeralGB: 2, SwapMB: 1024}
	dest2 := h.srv.addMoveDest(c.HostID(), src.InstanceID, huge)
	waitState(t, h.srv, dest2.ID, structs.AllocClientRunning)
	h.srv.setDesired(dest.ID, structs.AllocDesiredDeleted)
	waitState(t, h.srv, dest.ID, structs.AllocClientDeleted)
	if spec, _ := h.fake.Spec(src.InstanceID); spec.VCPUs != 8 || spec.MemoryMB != 8192 || spec.RootGB != 80 {
		t.Fatalf("after the second confirm: %+v", spec)
	}
	if n := h.fake.Calls("Resize"); n != 2 {
		t.Errorf("%d resizes, want 2", n)
	}
}
