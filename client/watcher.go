package client

import (
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// watchAllocs is the allocation watcher: a blocking query on
// Alloc.GetHostAllocs that wakes when the host's allocations change,
// diffs the answer against what it knows, fetches new and changed
// allocations and hands each to its runner, and tells the runners of
// allocations no longer listed to destroy their instance. After the
// first complete sync it reaps orphan instances.
func (c *Client) watchAllocs() {
	var index uint64
	known := make(map[string]uint64) // alloc id → AllocModifyIndex handed over
	synced := false
	b := c.newBackoff()
	for {
		req := &structs.AllocHostRequest{
			HostID: c.hostID,
			QueryOptions: structs.QueryOptions{
				Region:        c.cfg.Region,
				AuthToken:     c.cfg.NodeSecret,
				MinQueryIndex: index,
				MaxQueryTime:  c.maxQueryTime,
				AllowStale:    true,
			},
		}
		var resp structs.AllocIndexResponse
		err := c.call("Alloc.GetHostAllocs", req, &resp)
		behind := false
		if err == nil {
			behind, err = c.syncAllocs(resp.Allocs, known)
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			wait := b.Next()
			c.logger.Warn("allocation sync failed; retrying", "error", err, "retry_in", wait)
			if !c.sleep(wait) {
				return
			}
			continue
		}
		b.Reset()
		if behind {
			// The server that answered GetAllocs had not yet caught up
			// with the listing: list again soon rather than wait for
			// the next change, which may never come.
			if !c.sleep(100 * time.Millisecond) {
				return
			}
			continue
		}
		// An index that went backwards (a restored snapshot) is taken as
		// is; zero would make the next query return at once, forever.
		index = max(resp.Index, 1)
		if !synced {
			synced = true
			c.logger.Info("first allocation sync done", "allocations", len(known))
			c.goTracked(c.reapOrphans)
		}
	}
}

// syncAllocs applies one answer of Alloc.GetHostAllocs. It remembers
// the version of each allocation actually handed over, and reports
// behind when a fetched allocation is older than the listing said (the
// server that answered had not applied the change yet).
func (c *Client) syncAllocs(listed map[string]uint64, known map[string]uint64) (behind bool, err error) {
	for id := range known {
		if _, ok := listed[id]; !ok {
			c.logger.Info("allocation removed; destroying its instance", "alloc_id", id)
			delete(known, id)
			c.dropAlloc(id)
		}
	}
	var pull []string
	for id, idx := range listed {
		if k, ok := known[id]; !ok || k != idx {
			pull = append(pull, id)
		}
	}
	if len(pull) == 0 {
		return false, nil
	}
	slices.Sort(pull)
	req := &structs.AllocsGetRequest{
		AllocIDs:     pull,
		QueryOptions: structs.QueryOptions{Region: c.cfg.Region, AuthToken: c.cfg.NodeSecret},
	}
	var resp structs.AllocListResponse
	if err := c.call("Alloc.GetAllocs", req, &resp); err != nil {
		return false, err
	}
	instances := make(map[string]*structs.Instance, len(resp.Instances))
	for _, inst := range resp.Instances {
		if inst != nil {
			instances[inst.ID] = inst
		}
	}
	for _, a := range resp.Allocs {
		if a == nil {
			continue
		}
		idx, ok := listed[a.ID]
		if !ok {
			continue
		}
		if a.HostID != "" && a.HostID != c.hostID {
			c.logger.Error("servers sent an allocation of another host; ignoring it", "alloc_id", a.ID, "alloc_host_id", a.HostID)
			known[a.ID] = idx
			continue
		}
		if a.AllocModifyIndex < idx {
			behind = true
		}
		if k, ok := known[a.ID]; ok && a.AllocModifyIndex <= k {
			continue // nothing newer than what the runner has
		}
		c.logger.Debug("allocation changed", "alloc_id", a.ID, "desired", a.DesiredState, "alloc_modify_index", a.AllocModifyIndex)
		c.handOver(a, instances[a.InstanceID])
		known[a.ID] = a.AllocModifyIndex
	}
	// Allocations listed but not returned were removed meanwhile; the
	// next answer will not list them.
	return behind, nil
}
