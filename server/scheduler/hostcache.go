package scheduler

import (
	"math/rand/v2"

	"github.com/stratus-cloud/stratus/structs"
)

// HostCache keeps, across Schedule calls, what each host's standard
// resource classes hold (inventory and free capacity), so a placement
// does not look them up in every host's inventory and usage maps again:
// six map lookups per host, scattered over memory, were most of a
// single-instance placement's cost among 1,000 hosts. An entry is valid
// while the host is the same object: the state store never changes a
// stored host in place, it stores a changed copy. Entries are matched by
// position first (hosts come sorted by ID, so a host keeps its position
// until hosts are added or removed). A HostCache is not safe for
// concurrent use; each scheduler worker keeps its own.
type HostCache struct {
	entries []hostCacheEntry
}

type hostCacheEntry struct {
	host *structs.Host
	inv  [numStd]*structs.Inventory
	free [numStd]int64
}

// ScheduleCached is Schedule with the host summaries kept in cache; the
// plan is the one Schedule returns. A nil cache is Schedule.
func ScheduleCached(cache *HostCache, state State, eval *structs.Evaluation, instances []*structs.Instance, cfg Config, rng *rand.Rand) (*structs.Plan, error) {
	return scheduleWith(cache, state, eval, instances, cfg, rng, true)
}

// fill sets the views' standard-class caches from the cache, refreshing
// the entries of hosts that changed, and drops entries of hosts that are
// gone.
func (c *HostCache) fill(views []HostView) {
	if c == nil {
		return
	}
	if cap(c.entries) < len(views) {
		c.entries = append(make([]hostCacheEntry, 0, len(views)), c.entries...)
	}
	c.entries = c.entries[:len(views)]
	for i := range views {
		v, e := &views[i], &c.entries[i]
		if e.host != v.Host {
			e.host = v.Host
			for k := range numStd {
				e.inv[k], e.free[k] = v.std(k)
			}
		}
		v.inv, v.free, v.known = e.inv, e.free, 1<<numStd-1
	}
	clear(c.entries[len(views):cap(c.entries)])
}
