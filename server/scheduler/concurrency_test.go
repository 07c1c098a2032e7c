package scheduler

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// Concurrent Schedule calls over the same hosts (and over different
// host sets, so pooled working memory is reused across sizes) give the
// plans a lone call gives, and never write the hosts (the race detector
// would see it).
func TestScheduleConcurrent(t *testing.T) {
	big := make([]*structs.Host, 50)
	for i := range big {
		big[i] = testHost(fmt.Sprintf("h%02d", i), withUsage(structs.ResourceMemoryMB, int64(i*500)))
	}
	sets := [][]*structs.Host{big, big[:3], {testHost("solo")}, nil}
	cfg := DefaultConfig()
	cfg.HostSubsetSize = 4
	eval := &structs.Evaluation{ID: "e"}
	insts := instances(8, testFlavor(2, 4096, 20))
	want := make([]*structs.Plan, len(sets))
	for i, hosts := range sets {
		p, err := Schedule(sliceState(hosts), eval, insts, cfg, newRNG(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = p
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for round := range 20 {
				i := (g + round) % len(sets)
				got, err := Schedule(sliceState(sets[i]), eval, insts, cfg, newRNG(uint64(i)))
				if err != nil || !reflect.DeepEqual(got, want[i]) {
					t.Errorf("set %d: plan differs from a lone call (%v)", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
