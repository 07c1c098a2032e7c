package dataplane

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// remoteState is n remote ports of a network spread over hosts of ten
// ports each (endpoints 10.98.x.y: never reached, only programmed).
func remoteState(netID string, n int) []RemotePort {
	out := make([]RemotePort, n)
	for i := range out {
		host := i / 10
		out[i] = RemotePort{ID: uuid.NewString(), NetworkID: netID, MAC: fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff),
			IPs:    []string{fmt.Sprintf("10.%d.%d.%d", 100+i>>16, i>>8&0xff, i&0xff)},
			HostID: fmt.Sprint("h", host), TunnelIP: fmt.Sprintf("10.98.%d.%d", host>>8&0xff, host&0xff+1)}
	}
	return out
}

// TestOverlayEntriesAsPortsGrow measures one host's overlay as the
// network's ports on other hosts grow (ten per host): the forwarding
// entries (one per remote port plus one BUM entry per remote host),
// the neighbour entries (one per remote address), and the time a full
// apply, a no-change apply and a one-port change take.
func TestOverlayEntriesAsPortsGrow(t *testing.T) {
	requireNetTools(t)
	h := newUnderlay(t, 1)[0]
	n := overlayNet(3001)
	local := overlayPort(n, 0, "fa:16:3e:aa:00:01", "10.0.0.2")
	for _, size := range []int{10, 100, 1000} {
		remote := remoteState(n.ID, size)
		remote[0].IPs = append(remote[0].IPs, "fd00::1")
		d := &Desired{Networks: []Network{n}, Ports: []Port{local.Port}, Remote: remote}
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		start := time.Now()
		if err := h.plane.Apply(ctx, d); err != nil {
			cancel()
			t.Fatal(err)
		}
		full := time.Since(start)
		start = time.Now()
		if err := h.plane.Apply(ctx, d); err != nil {
			cancel()
			t.Fatal(err)
		}
		again := time.Since(start)
		// The entries alone: cleared, then programmed from scratch.
		dev := VXLANName(n.ID)
		if err := h.plane.programFDB(ctx, dev, nil); err != nil {
			cancel()
			t.Fatal(err)
		}
		if err := h.plane.programNeighbours(ctx, dev, nil); err != nil {
			cancel()
			t.Fatal(err)
		}
		start = time.Now()
		err := h.plane.programFDB(ctx, dev, remote)
		if err == nil {
			err = h.plane.programNeighbours(ctx, dev, remote)
		}
		entries := time.Since(start)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		hostsN := (size + 9) / 10
		fdb := fdbOf(t, h.ns, dev)
		neigh := strings.Count(sh(t, h.ns, "ip", "-4", "neigh", "show", "dev", dev), "\n")
		neigh6 := strings.Count(sh(t, h.ns, "ip", "-6", "neigh", "show", "dev", dev), "\n")
		if len(fdb) != size+hostsN || neigh != size || neigh6 != 1 {
			t.Fatalf("%d remote ports on %d hosts: %d forwarding entries (want %d), %d IPv4 and %d IPv6 neighbour entries",
				size, hostsN, len(fdb), size+hostsN, neigh, neigh6)
		}
		t.Logf("remote ports %4d on %3d hosts: %4d fdb entries, %4d neighbour entries; apply %v (no change %v); entries alone from scratch %v",
			size, hostsN, len(fdb), neigh, full.Round(time.Millisecond), again.Round(time.Millisecond), entries.Round(time.Millisecond))
	}
}
