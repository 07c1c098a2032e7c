package dataplane

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// watchNetworks keeps one blocking query on the ports of each network
// the host has a port on, and stops those of networks it left: a port
// created, deleted or moved on another host changes this host's
// overlay entries and its remote security groups' members, and must
// not wait for the next resync.
func (a *Agent) watchNetworks(d *Desired) {
	want := map[string]bool{}
	for _, p := range d.Ports {
		want[p.NetworkID] = true
	}
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	if a.ctx.Err() != nil {
		return
	}
	if a.netWatches == nil {
		a.netWatches = map[string]context.CancelFunc{}
	}
	for id, cancel := range a.netWatches {
		if !want[id] {
			cancel()
			delete(a.netWatches, id)
		}
	}
	for id := range want {
		if _, ok := a.netWatches[id]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(a.ctx)
		a.netWatches[id] = cancel
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.watchNetwork(ctx, id) }()
	}
}

// watchNetwork blocks on a network's ports until ctx ends and kicks the
// apply loop when what the dataplane reads of them changed (the list's
// index moves with any networking change, so it is not compared).
func (a *Agent) watchNetwork(ctx context.Context, netID string) {
	var index uint64
	last := ""
	b := &retry.Backoff{Min: time.Second, Max: 30 * time.Second, Jitter: 0.1}
	for ctx.Err() == nil {
		var out structs.NetListResponse
		req := &structs.NetListRequest{Kind: structs.NetKindPort, NetworkID: netID, Caller: admin}
		req.MinQueryIndex, req.MaxQueryTime = index, 5*time.Minute
		if err := a.callCtx(ctx, "Net.List", req, &out); err != nil {
			if ctx.Err() != nil {
				return
			}
			wait := b.Next()
			a.logger.Warn("cannot watch a network's ports", "network", netID, "error", err, "retry_in", wait)
			if !retry.SleepContext(ctx, wait) {
				return
			}
			continue
		}
		b.Reset()
		index = out.Index
		if sum := portsDigest(&out); sum != last {
			if last != "" {
				a.Resync()
			}
			last = sum
		}
	}
}

// portsDigest sums what the dataplane reads of a network's ports: their
// addresses, MACs, groups and where they are bound.
func portsDigest(out *structs.NetListResponse) string {
	lines := make([]string, 0, len(out.Ports)+1)
	for _, p := range out.Ports {
		l := fmt.Sprintf("%s %d %s %v %v", p.ID, p.ModifyIndex, p.MACAddress, p.FixedIPs, p.SecurityGroups)
		if bd := out.Bindings[p.ID]; bd != nil {
			l += " " + bd.HostID + " " + bd.TunnelIP
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	// A network with no port still has a digest unlike the first "".
	return "ports:" + strings.Join(lines, "\n")
}

// callCtx is call cut short by ctx as well as by Stop.
func (a *Agent) callCtx(ctx context.Context, method string, args, reply any) error {
	done := make(chan error, 1)
	go func() { done <- a.cfg.RPC.RPC(method, args, reply) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
