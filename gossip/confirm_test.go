package gossip

import (
	"bytes"
	"io"
	"log"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

func TestConfirmGone(t *testing.T) {
	// Something still holds c's port, as a live but unresponsive agent
	// would: gossip declares c dead, but it is not confirmed gone.
	// Another process may take the port in the instant between c's
	// shutdown and the test's listen: then the test starts again.
	var cl *cluster
	var ln net.Listener
	for attempt := 0; ln == nil; attempt++ {
		if attempt == 5 {
			t.Fatal("c's port was taken before the test could hold it, five times")
		}
		cl = newCluster(t)
		if cl.a.ConfirmGone("c") {
			t.Fatal("ConfirmGone of an alive member = true")
		}
		port := cl.c.BindPort()
		if err := cl.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
		ln, _ = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	cl.ea.wait(t, EventFailed, "c")
	if cl.a.ConfirmGone("c") {
		t.Error("ConfirmGone = true while c's port accepts connections")
	}
	// Nothing holds it: the port refuses, c is gone.
	_ = ln.Close()
	if !cl.a.ConfirmGone("c") {
		t.Error("ConfirmGone = false for a crashed member")
	}
	if !cl.a.ConfirmGone("never-a-member") {
		t.Error("ConfirmGone = false for an unknown member")
	}
}

// TestConfirmExited checks that a member whose port refuses is confirmed
// exited at once, while gossip still has it alive, and that one whose
// port accepts is not.
func TestConfirmExited(t *testing.T) {
	cl := newCluster(t)
	if cl.a.ConfirmExited("c") {
		t.Fatal("ConfirmExited of a live member = true")
	}
	if err := cl.c.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if m, _ := cl.a.Member("c"); m.Status != StatusAlive {
		t.Logf("gossip already has c %s; the check below does not depend on it", m.Status)
	}
	if !cl.a.ConfirmExited("c") {
		t.Error("ConfirmExited = false for a member whose port refuses")
	}
	if cl.a.ConfirmExited("never-a-member") {
		t.Error("ConfirmExited = true for a member with no address to check")
	}
}

// TestTransportDeliversEachPacketAtItsSize checks the copy out of the
// transport's reused read buffer: packets of very different sizes arrive
// intact, and an earlier packet is not overwritten by a later one.
func TestTransportDeliversEachPacketAtItsSize(t *testing.T) {
	tr, err := newTransport("127.0.0.1", 0, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown() })
	ip, port, err := tr.FinalAdvertiseAddr("", 0)
	if err != nil || !ip.Equal(net.IPv4(127, 0, 0, 1)) || port != tr.port() {
		t.Fatalf("FinalAdvertiseAddr = %v, %d, %v; want 127.0.0.1, %d", ip, port, err, tr.port())
	}
	conn, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: ip, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sizes := []int{60000, 1, 1400, 7}
	var sent [][]byte
	for k, size := range sizes {
		msg := make([]byte, size)
		for i := range msg {
			msg[i] = byte(i*7 + k)
		}
		sent = append(sent, msg)
	}
	// Send all before reading any, so each is read into the same buffer
	// while the earlier ones are still queued.
	done := make(chan error, 1)
	go func() {
		for _, msg := range sent {
			if _, err := conn.Write(msg); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var got []*memberlist.Packet
	for range sent {
		select {
		case p := <-tr.PacketCh():
			got = append(got, p)
		case <-time.After(time.Minute):
			t.Fatal("no packet within a minute")
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		// A small packet must not pin a buffer the size of the largest.
		if !bytes.Equal(p.Buf, sent[i]) || (len(p.Buf) < 2000 && cap(p.Buf) > 4096) {
			t.Errorf("packet %d: got %d bytes (cap %d), want the %d sent", i, len(p.Buf), cap(p.Buf), len(sent[i]))
		}
		if p.From.String() != conn.LocalAddr().String() {
			t.Errorf("packet %d from %s, want %s", i, p.From, conn.LocalAddr())
		}
	}
}

// TestNumAliveFollowsStatus checks the count that sizes broadcasts, kept
// as statuses change instead of counted at every gossip round.
func TestNumAliveFollowsStatus(t *testing.T) {
	cl := newCluster(t)
	if n := cl.a.numAlive(); n != 3 {
		t.Fatalf("numAlive = %d with 3 members alive", n)
	}
	if err := cl.c.Shutdown(); err != nil {
		t.Fatal(err)
	}
	cl.ea.wait(t, EventFailed, "c")
	if n := cl.a.numAlive(); n != 2 {
		t.Errorf("numAlive = %d after c failed, want 2", n)
	}
	if err := cl.b.Leave(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	cl.ea.wait(t, EventLeave, "b")
	if n := cl.a.numAlive(); n != 1 {
		t.Errorf("numAlive = %d after b left, want 1", n)
	}
}
