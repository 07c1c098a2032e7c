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

// TestCheckerCatchesBrokenReads runs the register workload twice while a
// follower is cut from the others (its HTTP port still open): against
// the build under test, where the checker must find nothing, and against
// servers built with the stratus_brokenreads tag, which answer default
// reads from their own state as if ?stale had been asked, where the
// checker must report the stale reads the cut follower serves. It is
// what shows TestFaultInjection's checks can fail, and fail only for a
// broken server.
func TestCheckerCatchesBrokenReads(t *testing.T) {
	if os.Getenv("STRATUS_ROBUSTNESS") == "" {
		t.Skip("runs with STRATUS_ROBUSTNESS=1 (make test-robustness)")
	}
	net, err := newNetFaults(t)
	if !requireOrSkip(t, "network faults", err) {
		t.Skip("the proof needs a partition that keeps HTTP open")
	}
	broken, err := buildCloudctl("cloudctl-brokenreads", "-tags", "stratus_brokenreads")
	if err != nil {
		t.Fatal(err)
	}
	seed := runSeed(t)
	t.Run("correct build", func(t *testing.T) {
		ops, problems := followerCutScenario(t, net, cloudctlBin, 120, seed)
		if len(problems) != 0 {
			t.Errorf("the checker rejected %d operations of the correct build: %v", ops, problems)
		}
	})
	t.Run("broken read path", func(t *testing.T) {
		ops, problems := followerCutScenario(t, net, broken, 121, seed)
		if len(problems) == 0 {
			t.Fatalf("the checker accepted %d operations from servers that serve default reads from stale state", ops)
		}
		t.Logf("as it must, the checker caught the broken read path: %v", problems)
	})
}

// followerCutScenario runs the register workload on a three-server
// cluster of bin for 10s, a follower cut off for 6s of it, and returns
// how many operations were checked and the checker's problems.
func followerCutScenario(t *testing.T, net *netFaults, bin string, ipByte int, seed int64) (int, []string) {
	ipBase := fmt.Sprintf("127.%d.%d", ipByte, os.Getpid()%250)
	c := startCluster(t, clusterSpec{ipBase: ipBase, servers: 3, net: net, bin: bin})
	bootstrapAdmin(t, c)
	admin := newClient(t, c.servers[0].http)
	waitHealthy(t, c)
	// One key per flavor: the Nova API rewrites a flavor's extra specs
	// whole, so two keys of one flavor lose updates on a correct build
	// too, and the proof must fail only for the broken read path.
	regs := setupRegisters(t, admin, registerSpec{flavors: 3, flavorKeys: 1})

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
	return len(ops), problems
}
