package gossip

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// Member returns the named member as the local node sees it.
func (p *Pool) Member(name string) (Member, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ms, ok := p.members[name]
	if !ok {
		return Member{}, false
	}
	return ms.Member, true
}

// ConfirmGone double-checks a member gossip declared failed before the
// caller acts on it. It reports false when the member is alive again in
// the local view (it refuted the failure), or when its gossip TCP port
// still accepts a connection: the kernel completes that handshake for
// any process that holds the port, however slow it is to answer probes,
// so a member that is only overloaded is not taken for gone. A crashed
// process's port refuses at once; a host that is off or cut off does not
// answer, which counts as gone after the confirmation timeout (four
// probe timeouts, at least 2 s).
func (p *Pool) ConfirmGone(name string) bool {
	m, ok := p.Member(name)
	if !ok {
		return true // forgotten: long gone
	}
	if m.Status == StatusAlive || m.Status == StatusSuspect {
		return false
	}
	if m.Status == StatusLeft {
		return true // said goodbye
	}
	conn, err := net.DialTimeout("tcp", m.Address(), p.confirmTimeout)
	if err != nil {
		return true
	}
	_ = conn.Close()
	p.logger.Warn("gossip declared a member failed but its gossip port still accepts connections; not confirming",
		"member", name, "addr", m.Address())
	return false
}

// confirmTimeoutFor is how long ConfirmGone waits for a connection: four
// probe timeouts, and at least 2 s, because the waiting side may itself
// be slow to run (a crashed process's port refuses at once, so only a
// host that is off or cut off costs the wait).
func confirmTimeoutFor(probeTimeout time.Duration) time.Duration {
	return max(4*probeTimeout, 2*time.Second)
}

// exitDialTimeout bounds ConfirmExited's dial. A refusal comes back in
// one round trip; anything slower is not the answer it looks for.
const exitDialTimeout = time.Second

// ConfirmExited reports whether the named member's process is gone,
// whatever gossip says of it yet: the caller saw the member's other
// connections close, which is what the kernel does to a process that
// exits, long before any probe notices. It reports true when the member
// left, or when its gossip TCP port refuses a connection, which means
// nothing listens there any more. A port that accepts (a live member
// whose connection closed for another reason) or does not answer (a
// host that is off or cut off: gossip decides that) reports false, and
// so does a member the pool does not know: with no address to dial,
// nothing confirms the exit (gossip forgets a member some time after
// declaring it dead, and may declare a live but starved one dead).
func (p *Pool) ConfirmExited(name string) bool {
	m, ok := p.Member(name)
	if !ok {
		return false
	}
	if m.Status == StatusLeft {
		return true
	}
	conn, err := net.DialTimeout("tcp", m.Address(), exitDialTimeout)
	if err == nil {
		_ = conn.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
