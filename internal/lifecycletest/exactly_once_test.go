package lifecycletest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// interruptStep is one operation of the exactly-once tests: the driver
// method that does its work and the status it ends in.
type interruptStep struct {
	op     string
	method string // fake driver method that carries it out
	end    string
	flavor string
}

var interruptSteps = []interruptStep{
	{op: structs.OpRebootSoft, method: "Reboot", end: "ACTIVE"},
	{op: structs.OpPause, method: "Pause", end: "PAUSED"},
	{op: structs.OpUnpause, method: "Unpause", end: "ACTIVE"},
	{op: structs.OpSuspend, method: "Suspend", end: "SUSPENDED"},
	{op: structs.OpResume, method: "Resume", end: "ACTIVE"},
	{op: structs.OpRescue, method: "Rescue", end: "RESCUE"},
	{op: structs.OpUnrescue, method: "Unrescue", end: "ACTIVE"},
	{op: structs.OpStop, method: "PowerOff", end: "SHUTOFF"},
	{op: structs.OpStart, method: "PowerOn", end: "ACTIVE"},
	{op: structs.OpRebuild, method: "Spawn", end: "ACTIVE"},
	{op: structs.OpResize, method: "Spawn", end: "VERIFY_RESIZE", flavor: "m1.small"},
	{op: structs.OpConfirmResize, method: "Destroy", end: "ACTIVE"},
	{op: structs.OpMigrate, method: "Spawn", end: "VERIFY_RESIZE"},
	{op: structs.OpRevertResize, method: "Destroy", end: "ACTIVE"},
	{op: structs.OpLiveMigrate, method: "LiveMigrate", end: "ACTIVE"},
	{op: structs.OpShelve, method: "Destroy", end: "SHELVED_OFFLOADED"},
	{op: structs.OpUnshelve, method: "Spawn", end: "ACTIVE"},
}

// waitHostsUp waits until the named hosts are up: on a loaded machine a
// restarted agent's host may miss a heartbeat, and operations refuse to
// start on a down host.
func (c *cloud) waitHostsUp(names ...string) {
	for _, name := range names {
		c.waitFor(name+" up", func() error {
			if h := c.host(name); h == nil || !h.Up() {
				return fmt.Errorf("down")
			}
			return nil
		})
	}
}

func (c *cloud) calls(method string) int {
	n := 0
	for _, name := range []string{"hv1", "hv2"} {
		n += c.hv(name).drv.Calls(method)
	}
	return n
}

// TestEveryOperationSurvivesALeaderChange runs every operation on a
// three-server cluster and moves leadership while each is in flight:
// each completes, its driver work happens exactly once, and its action
// records each event once.
func TestEveryOperationSurvivesALeaderChange(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{servers: 3})
	slow := fake.Config{SpawnLatency: 400 * time.Millisecond, DestroyLatency: 400 * time.Millisecond, PowerLatency: 400 * time.Millisecond, MigrateLatency: 400 * time.Millisecond}
	c.addHostWith("hv1", slow)
	c.addHostWith("hv2", slow)
	id := c.boot("vm", "m1.tiny")
	for _, st := range interruptSteps {
		c.waitHostsUp("hv1", "hv2")
		before := c.calls(st.method)
		out := c.mustTask(id, st.op, func(r *structs.InstanceTaskRequest) { r.FlavorID = st.flavor })
		term := c.term()
		if err := c.rpc("Operator.RaftTransferLeadership", &structs.GenericRequest{}, &structs.GenericResponse{}); err != nil {
			t.Fatalf("%s: transfer leadership: %v", st.op, err)
		}
		// A transfer that timed out under load is retried by c.rpc and
		// may hand leadership back to the first leader: what counts is
		// that an election happened while the operation was in flight.
		c.waitFor("a leader elected after the transfer", func() error {
			if l := c.leader(); l == nil || l.Raft().CurrentTerm() <= term {
				return fmt.Errorf("no new leader yet")
			}
			return nil
		})
		c.waitStatus(id, st.end)
		c.settle(t, st)
		c.checkOnce(t, id, st, before, out.RequestID)
	}
}

// TestEveryOperationSurvivesAnAgentRestart restarts the instance's
// agent while each operation is in the driver: each completes, exactly
// once.
func TestEveryOperationSurvivesAnAgentRestart(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{})
	slow := fake.Config{SpawnLatency: 400 * time.Millisecond, DestroyLatency: 400 * time.Millisecond, PowerLatency: 400 * time.Millisecond, MigrateLatency: 400 * time.Millisecond}
	c.addHostWith("hv1", slow)
	c.addHostWith("hv2", slow)
	id := c.boot("vm", "m1.tiny")
	for _, st := range interruptSteps {
		c.waitHostsUp("hv1", "hv2")
		before := c.calls(st.method)
		out := c.mustTask(id, st.op, func(r *structs.InstanceTaskRequest) { r.FlavorID = st.flavor })
		c.waitFor(st.method+" in the driver", func() error {
			if c.calls(st.method) == before {
				return fmt.Errorf("not called yet")
			}
			return nil
		})
		for _, hv := range []string{"hv1", "hv2"} {
			c.stopAgent(hv)
			c.startAgent(hv)
		}
		c.waitStatus(id, st.end)
		// The interrupted call may be made again; never a third time,
		// and never after the operation is done.
		c.settle(t, st)
		n := c.calls(st.method) - before
		if n < 1 || n > 2 {
			t.Fatalf("%s: %s called %d times", st.op, st.method, n)
		}
		c.checkOnce(t, id, st, before+n-1, out.RequestID)
	}
}

// settle waits until the hypervisors run as many copies as the
// operation leaves (a confirm's source copy goes after the instance is
// already ACTIVE).
func (c *cloud) settle(t *testing.T, st interruptStep) {
	t.Helper()
	c.waitFor(st.op+" settled", func() error {
		if n, want := c.copies(t), wantCopies(st); n != want {
			return fmt.Errorf("%d copies, want %d", n, want)
		}
		return nil
	})
}

func (c *cloud) copies(t *testing.T) int {
	return len(c.hv("hv1").instances(t)) + len(c.hv("hv2").instances(t))
}

func wantCopies(st interruptStep) int {
	switch st.end {
	case "SHELVED_OFFLOADED":
		return 0
	case "VERIFY_RESIZE":
		return 2 // the source copy waits, stopped, for confirm or revert
	}
	return 1
}

// checkOnce checks an operation's work was done once: the driver method
// was called once since before, the instance runs on one hypervisor
// only, and the action's events each happened once and succeeded.
func (c *cloud) checkOnce(t *testing.T, id string, st interruptStep, before int, requestID string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // room for a wrongly repeated call to show
	if n := c.calls(st.method) - before; n != 1 {
		t.Fatalf("%s: %s called %d times", st.op, st.method, n)
	}
	if n, want := c.copies(t), wantCopies(st); n != want {
		t.Fatalf("%s: %d copies on the hypervisors, want %d", st.op, n, want)
	}
	// Reads right after a leader change may lag the entry that finished
	// the operation by a moment: wait for the action to show it.
	var a *structs.InstanceAction
	c.waitFor(st.op+" action finished", func() error {
		var out structs.InstanceActionListResponse
		if err := c.rpc("Instance.Actions", &structs.InstanceActionListRequest{InstanceID: id, RequestID: requestID}, &out); err != nil || len(out.Actions) != 1 {
			return fmt.Errorf("action %s: %v %v", requestID, out.Actions, err)
		}
		a = out.Actions[0]
		for _, ev := range a.Events {
			if ev.FinishTime == 0 {
				return fmt.Errorf("event %s unfinished", ev.Event)
			}
		}
		return nil
	})
	eventsOnce(t, a)
	for _, ev := range a.Events {
		if ev.Result != structs.EventSuccess {
			t.Fatalf("%s: event %+v", st.op, ev)
		}
	}
}
