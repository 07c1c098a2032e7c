package fsm

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unique"

	"github.com/stratus-cloud/stratus/structs"
)

// Sharing of what many stored objects hold alike. Every decoded Raft
// entry and snapshot record carries its own copy of each string and
// map, so 100,000 instances of one project on 1,000 hosts would hold
// 100,000 copies of the project id, of "active", of their flavor and
// of their allocations' identical resource maps. Before an instance,
// allocation, action or evaluation is stored, these are replaced by a
// canonical copy with the same value. Nothing here changes a value, so
// Apply stays deterministic whatever the caches hold; the caches are
// process-wide (the servers of a test process share them) and bounded.

// internCacheMax bounds the strong caches; a full cache starts over
// (what was already shared stays shared).
const internCacheMax = 1 << 16

var internCache = struct {
	sync.Mutex
	strings map[string]string
	flavors map[string]*structs.Flavor
	// lastFlavor and lastCanonical remember the last flavor interned:
	// the instances of one create share their decoded flavor.
	lastFlavor, lastCanonical *structs.Flavor
	// resources maps a canonical map's content key to it; canonical
	// holds the identity of each canonical map for a quick check.
	resources map[string]map[string]int64
	canonical map[uintptr]bool
}{
	strings:   map[string]string{},
	flavors:   map[string]*structs.Flavor{},
	resources: map[string]map[string]int64{},
	canonical: map[uintptr]bool{},
}

// internLocked returns the canonical copy of s, a value of a small
// vocabulary (states, project, user, host, flavor and image ids).
func internLocked(s string) string {
	if s == "" {
		return s
	}
	if c, ok := internCache.strings[s]; ok {
		return c
	}
	if len(internCache.strings) >= internCacheMax {
		clear(internCache.strings)
	}
	internCache.strings[s] = s
	return s
}

// internWeak returns a canonical copy of a value shared by the objects
// of one request (a reservation or evaluation id): weakly held, so that
// ids of past requests do not fill the strong cache.
func internWeak(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internFlavorLocked returns the stored flavor snapshot equal to f, or
// makes f the one.
func internFlavorLocked(f *structs.Flavor) *structs.Flavor {
	if f == nil {
		return nil
	}
	if f == internCache.lastFlavor {
		return internCache.lastCanonical
	}
	c, ok := internCache.flavors[f.ID]
	if !ok || (c != f && !reflect.DeepEqual(c, f)) {
		if len(internCache.flavors) >= internCacheMax {
			clear(internCache.flavors)
		}
		internCache.flavors[f.ID] = f
		c = f
	}
	internCache.lastFlavor, internCache.lastCanonical = f, c
	return c
}

// internResourcesLocked returns the canonical map equal to m.
// Allocations never change their Resources map in place
// (structs.Allocation.Copy shares it), so one map serves them all.
func internResourcesLocked(m map[string]int64) map[string]int64 {
	if len(m) == 0 {
		return m
	}
	id := reflect.ValueOf(m).Pointer()
	if internCache.canonical[id] {
		return m
	}
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(m[k], 10))
		b.WriteByte(';')
	}
	key := b.String()
	if c, ok := internCache.resources[key]; ok {
		return c
	}
	if len(internCache.resources) >= internCacheMax {
		clear(internCache.resources)
		clear(internCache.canonical)
	}
	internCache.resources[key] = m
	internCache.canonical[id] = true
	return m
}

// internInstance makes inst share its repeated values.
func internInstance(inst *structs.Instance) {
	inst.ReservationID = internWeak(inst.ReservationID)
	internCache.Lock()
	defer internCache.Unlock()
	for _, p := range []*string{&inst.ProjectID, &inst.UserID, &inst.FlavorID, &inst.ImageID, &inst.KeyName,
		&inst.AZ, &inst.HostID, &inst.VMState, &inst.TaskState, &inst.LockedBy, &inst.ServerGroupID,
		&inst.TargetHostID, &inst.InstanceGroup} {
		*p = internLocked(*p)
	}
	inst.Flavor = internFlavorLocked(inst.Flavor)
}

// internAlloc makes a share its repeated values.
func internAlloc(a *structs.Allocation) {
	a.EvalID = internWeak(a.EvalID)
	internCache.Lock()
	defer internCache.Unlock()
	for _, p := range []*string{&a.HostID, &a.DesiredState, &a.ClientState, &a.PendingAction} {
		*p = internLocked(*p)
	}
	a.Resources = internResourcesLocked(a.Resources)
	a.Flavor = internFlavorLocked(a.Flavor)
}

// internAction makes a share its repeated values.
func internAction(a *structs.InstanceAction) {
	internCache.Lock()
	defer internCache.Unlock()
	for _, p := range []*string{&a.Action, &a.ProjectID, &a.UserID, &a.Message} {
		*p = internLocked(*p)
	}
	for _, ev := range a.Events {
		for _, p := range []*string{&ev.Event, &ev.Result, &ev.HostID} {
			*p = internLocked(*p)
		}
	}
}

// internEval makes e share its repeated values.
func internEval(e *structs.Evaluation) {
	internCache.Lock()
	defer internCache.Unlock()
	e.TriggeredBy = internLocked(e.TriggeredBy)
	e.Status = internLocked(e.Status)
}

// shareInstanceIDs makes an evaluation's instance ids share the strings
// of the instances created with it (listed in the same order).
func shareInstanceIDs(ev *structs.Evaluation, insts []*structs.Instance) {
	for k, id := range ev.InstanceIDs {
		if k < len(insts) && insts[k] != nil && insts[k].ID == id {
			ev.InstanceIDs[k] = insts[k].ID
		}
	}
}
