package robustness

import (
	"fmt"
	"math/rand"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckerCatchesBrokenReads runs the register workload against
// servers built with the stratus_brokenreads tag, which answer default
// reads from their own state as if ?stale had been asked, while a
// follower is cut from the others (its HTTP port still open): the
// checker must report the stale reads that follower serves. It is what
// shows TestFaultInjection's checks can fail.
func TestCheckerCatchesBrokenReads(t *testing.T) {
	if os.Getenv("STRATUS_ROBUSTNESS") == "" {
		t.Skip("runs with STRATUS_ROBUSTNESS=1 (make test-robustness)")
	}
	net, err := newNetFaults(t)
	if !requireOrSkip(t, "network faults", err) {
		t.Skip("the proof needs a partition that keeps HTTP open")
	}
	bin, err := buildCloudctl("cloudctl-brokenreads", "-tags", "stratus_brokenreads")
	if err != nil {
		t.Fatal(err)
	}
	seed := runSeed(t)
	ipBase := fmt.Sprintf("127.%d.%d", 120+os.Getpid()%40, os.Getpid()/40%250)
	c := startCluster(t, clusterSpec{ipBase: ipBase, servers: 3, net: net, bin: bin})
	bootstrapAdmin(t, c)
	admin := newClient(t, c.servers[0].http)
	waitHealthy(t, c)
	regs := setupRegisters(t, admin, 0)

	rh := newRegHistory(newHistory())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seq atomic.Int64
	for w := 0; w < regWorkers; w++ {
		wg.Add(1)
		rng := rand.New(rand.NewSource(seed + int64(w)))
		go func(w int) {
			defer wg.Done()
			runRegisterWorker(t, c, rh, w, regs, &seq, rng, stop)
		}(w)
	}
	time.Sleep(2 * time.Second)
	f := followerOf(t, c)
	t.Logf("cutting follower %s off", f.name)
	if err := net.isolate(f); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	if err := net.heal(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	ops := rh.snapshot()
	rh.mu.Lock()
	stales, failed := rh.stales, rh.failed
	rh.mu.Unlock()
	_, _, problems := checkRegisters(ops, stales, failed, 60*time.Second)
	if len(problems) == 0 {
		t.Fatalf("the checker accepted %d operations from servers that serve default reads from stale state", len(ops))
	}
	t.Logf("as it must, the checker caught the broken read path: %v", problems)
}
