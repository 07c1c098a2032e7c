package gossip

import (
	"fmt"
	"testing"
	"time"
)

// TestGracefulLeaveSeenByEveryMember checks that every member of a pool
// larger than the intent's few gossip retransmissions (two, at this size)
// ends up with the graceful leave as a leave: the intent goes straight to
// each live member ahead of memberlist's leave, and push/pull carries it
// to any that missed it. (A member starved of CPU long enough may still
// have been declared failed before it left; that is gossip doing its job,
// so only the outcome is checked here.)
func TestGracefulLeaveSeenByEveryMember(t *testing.T) {
	const n = 8
	pools := make([]*Pool, n)
	logs := make([]*eventLog, n)
	for i := range pools {
		name := fmt.Sprintf("m%d", i)
		pools[i] = newTestPool(t, name, testMeta(name, RoleClient, "eu"))
		logs[i] = watchEvents(pools[i])
	}
	for _, p := range pools[1:] {
		waitFor(t, p.cfg.NodeName+" to join", func() bool {
			_, err := p.Join([]string{pools[0].Addr()})
			return err == nil
		})
	}
	for _, p := range pools {
		waitFor(t, p.cfg.NodeName+" to see every member alive", func() bool { return aliveCount(p) == n })
	}
	leaver := pools[n-1]
	if err := leaver.Leave(5 * time.Second); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	failed := 0
	for i, p := range pools[:n-1] {
		logs[i].wait(t, EventLeave, leaver.cfg.NodeName)
		waitFor(t, p.cfg.NodeName+" to see the leaver left", func() bool {
			return hasStatus(p, leaver.cfg.NodeName, StatusLeft)
		})
		if _, ok := logs[i].find(EventFailed, leaver.cfg.NodeName); ok {
			failed++
		}
	}
	t.Logf("%d of %d members also saw a failure of the leaver at some point", failed, n-1)
}

// TestPushPullCarriesLeaveIntents checks the anti-entropy path: a member
// that missed a leave intent and recorded the leave as a failure learns
// the intent from a peer's push/pull state and corrects it.
func TestPushPullCarriesLeaveIntents(t *testing.T) {
	cl := newCluster(t)
	b := cl.b.Local()
	// c knows nothing of an intent; a does (as if c missed its gossip).
	a := cl.a
	if !a.applyIntent(leaveIntent{Node: "b", Session: cl.b.session}) {
		t.Fatal("applyIntent of a new intent = false")
	}
	if a.applyIntent(leaveIntent{Node: "b", Session: cl.b.session}) {
		t.Error("applyIntent of a known intent = true")
	}
	state := a.localIntentState()
	if len(state) < 2 || state[0] != intentStateVersion {
		t.Fatalf("localIntentState = %x", state)
	}

	// b crashes: c declares it failed, having no intent.
	if err := cl.b.Shutdown(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "c to see b dead", func() bool { return hasStatus(cl.c, "b", StatusDead) })
	ec := watchEvents(cl.c)
	cl.c.mergeIntentState(state)
	if !hasStatus(cl.c, "b", StatusLeft) {
		m, _ := member(cl.c, "b")
		t.Fatalf("after merging a's intents c sees b %s, want left", m.Status)
	}
	if ev := ec.wait(t, EventLeave, "b"); ev.Member.Meta != b.Meta {
		t.Errorf("corrected leave event member = %+v", ev.Member)
	}

	// Malformed, empty and unknown-version states are ignored.
	for _, bad := range [][]byte{nil, {intentStateVersion}, {intentStateVersion, 0xc1}, append([]byte{99}, state[1:]...)} {
		cl.c.mergeIntentState(bad)
	}
}

// TestStaleIntentDoesNotApplyToNewRun checks that an intent of an earlier
// run of a member, still carried by push/pull, is not recorded for the
// member's new run.
func TestStaleIntentDoesNotApplyToNewRun(t *testing.T) {
	cl := newCluster(t)
	if cl.a.applyIntent(leaveIntent{Node: "c", Session: cl.c.session + 2}) {
		t.Error("an intent with another session than alive c's was recorded")
	}
	if !hasStatus(cl.a, "c", StatusAlive) {
		t.Error("a stale intent changed c's status")
	}
}
