package nova

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentExtraSpecsAllStay: admins setting different extra specs
// of one flavor at the same time, through a real server, all see their
// spec stay — each read-modify-write is a compare-and-set retried from a
// fresh read, so none undoes another (found by the fault-injection
// suite's shared-key workload).
func TestConcurrentExtraSpecsAllStay(t *testing.T) {
	h, _ := newRealHarness(t)
	const writers, rounds = 8, 3
	path := "/compute/v2.1/flavors/1/os-extra_specs"
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				key := fmt.Sprintf("cas:w%d", w)
				resp := h.req("PUT", path+"/"+key, adminTok, "", map[string]any{key: fmt.Sprint(r)})
				if resp.status != 200 {
					errs <- fmt.Errorf("%s round %d: %d %s", key, r, resp.status, resp.raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	specs := h.req("GET", path, readerTok, "", nil).expect(t, 200).obj("extra_specs")
	for w := range writers {
		if key := fmt.Sprintf("cas:w%d", w); specs[key] != fmt.Sprint(rounds-1) {
			t.Errorf("%s = %v after every write was acknowledged, want %d", key, specs[key], rounds-1)
		}
	}
}
