package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestFlavorUpsertCheckIndex: an upsert with a check index applies only
// while the flavor is as it was read, so a read-modify-write never undoes
// another; below the level that knows it, it is refused, never applied
// unchecked.
func TestFlavorUpsertCheckIndex(t *testing.T) {
	t.Parallel()
	for _, level := range []structs.FSMLevel{structs.CurrentFSMLevel, structs.FSMLevelSegments} {
		s := testServer(t, func(c *Config) { c.NumSchedulers, c.FSMLevel = -1, level })
		waitForLeader(t, s)
		seedFlavors(t, s)
		read, err := s.fsm.State().FlavorByID(nil, "1")
		if err != nil || read == nil {
			t.Fatalf("flavor 1: %v %v", read, err)
		}
		upsert := func(key string, check uint64) error {
			f := read.Copy()
			if f.ExtraSpecs == nil {
				f.ExtraSpecs = map[string]string{}
			}
			f.ExtraSpecs[key] = "v"
			return s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{f}, CheckIndex: check}, &structs.FlavorUpsertResponse{})
		}
		if err := upsert("a", read.ModifyIndex); err != nil && level >= structs.FSMLevelFlavorCAS {
			t.Fatalf("%s: first write from the read: %v", level, err)
		}
		err = upsert("b", read.ModifyIndex) // from the same, now stale, read
		stored, _ := s.fsm.State().FlavorByID(nil, "1")
		if level >= structs.FSMLevelFlavorCAS {
			if !structs.IsFlavorChanged(err) || stored.ExtraSpecs["a"] != "v" || stored.ExtraSpecs["b"] != "" {
				t.Fatalf("%s: stale write %v, specs %v", level, err, stored.ExtraSpecs)
			}
		} else if structs.KindOf(err) != structs.KindUnavailable || stored.ExtraSpecs["b"] != "" {
			t.Fatalf("%s: write %v, specs %v; want it refused", level, err, stored.ExtraSpecs)
		}
	}
}
