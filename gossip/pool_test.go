package gossip

import (
	"errors"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestJoinPropagatesMeta(t *testing.T) {
	cl := newCluster(t)

	for _, p := range cl.all() {
		if p.BindPort() == 0 {
			t.Fatalf("%s: BindPort() = 0", p.cfg.NodeName)
		}
		if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.BindPort())); p.Addr() != want {
			t.Fatalf("%s: Addr() = %q, want %q", p.cfg.NodeName, p.Addr(), want)
		}
		if p.NumMembers() != 3 {
			t.Fatalf("%s: NumMembers() = %d, want 3", p.cfg.NodeName, p.NumMembers())
		}
		local := p.Local()
		if local.Name != p.cfg.NodeName || local.Status != StatusAlive || local.Meta != p.cfg.Meta {
			t.Fatalf("%s: Local() = %+v", p.cfg.NodeName, local)
		}

		ms := p.Members()
		if got := names(ms); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("%s: Members() names = %v, want sorted [a b c]", p.cfg.NodeName, got)
		}
		for _, other := range cl.all() {
			m, _ := member(p, other.cfg.NodeName)
			if m.Meta != other.cfg.Meta {
				t.Errorf("%s sees %s meta %+v, want %+v", p.cfg.NodeName, m.Name, m.Meta, other.cfg.Meta)
			}
			if m.Address() != other.Addr() || m.Status != StatusAlive {
				t.Errorf("%s sees %s at %s status %s, want %s alive", p.cfg.NodeName, m.Name, m.Address(), m.Status, other.Addr())
			}
		}
	}

	// Joins are reported as events, carrying metadata, including our own.
	for _, n := range []string{"a", "b", "c"} {
		ev := cl.ea.wait(t, EventJoin, n)
		if ev.Member.Meta.ID != "id-"+n {
			t.Errorf("join event for %s has meta %+v", n, ev.Member.Meta)
		}
	}
}

func TestServersFiltersByRoleAndRegion(t *testing.T) {
	cl := newCluster(t)
	for _, p := range cl.all() {
		for region, want := range map[string][]string{
			"":     {"a", "b"},
			"eu":   {"a"}, // c is in eu but a client
			"us":   {"b"},
			"mars": {},
		} {
			if got := names(p.Servers(region)); !slices.Equal(got, want) {
				t.Errorf("%s: Servers(%q) = %v, want %v", p.cfg.NodeName, region, got, want)
			}
		}
	}
	got := cl.c.Servers("eu")
	if len(got) != 1 || got[0].Meta.RPCAddr != cl.a.cfg.Meta.RPCAddr || got[0].Meta.Expect != 3 {
		t.Fatalf("c: Servers(eu) = %+v", got)
	}
}

func TestGracefulLeave(t *testing.T) {
	cl := newCluster(t)
	if err := cl.b.Leave(5 * time.Second); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if s := cl.b.Local().Status; s != StatusLeft {
		t.Errorf("leaver's Local().Status = %s, want left", s)
	}

	ev := cl.ea.wait(t, EventLeave, "b")
	if ev.Member.Status != StatusLeft || ev.Member.Meta != cl.b.cfg.Meta {
		t.Errorf("leave event member = %+v", ev.Member)
	}
	for _, p := range []*Pool{cl.a, cl.c} {
		waitFor(t, p.cfg.NodeName+" to see b left", func() bool { return hasStatus(p, "b", StatusLeft) })
		if got := names(p.Servers("")); !slices.Equal(got, []string{"a"}) {
			t.Errorf("%s: Servers() after leave = %v, want [a]", p.cfg.NodeName, got)
		}
		if p.NumMembers() != 2 {
			t.Errorf("%s: NumMembers() = %d, want 2", p.cfg.NodeName, p.NumMembers())
		}
	}
	if _, failed := cl.ea.find(EventFailed, "b"); failed {
		t.Errorf("graceful leave was reported as a failure")
	}
	// The leaver sees its own departure as a leave too.
	cl.eb.wait(t, EventLeave, "b")
}

func TestShutdownWithoutLeaveIsFailureAndNameCanBeReclaimed(t *testing.T) {
	cl := newCluster(t)
	if err := cl.c.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	start := time.Now()
	ev := cl.ea.wait(t, EventFailed, "c")
	t.Logf("failure detected after %v", time.Since(start).Round(time.Millisecond))
	if ev.Member.Status != StatusDead || ev.Member.Meta != cl.c.cfg.Meta {
		t.Errorf("failed event member = %+v", ev.Member)
	}
	cl.eb.wait(t, EventFailed, "c")
	for _, p := range []*Pool{cl.a, cl.b} {
		waitFor(t, p.cfg.NodeName+" to see c dead", func() bool { return hasStatus(p, "c", StatusDead) })
	}
	if _, left := cl.ea.find(EventLeave, "c"); left {
		t.Errorf("failure was reported as a graceful leave")
	}

	// A restarted c (same name, new port, new session) rejoins once the
	// dead-node reclaim time has passed; until then memberlist rejects the
	// address change, so keep retrying the join.
	// If the kernel hands c the old port again there is no address
	// change to reclaim, but the rejoin below must still succeed.
	c2 := newTestPool(t, "c", testMeta("c", RoleClient, "eu"))
	var lastJoin time.Time
	waitFor(t, "restarted c to be alive at its new address on a", func() bool {
		m, ok := member(cl.a, "c")
		if ok && m.Status == StatusAlive && m.Port == c2.BindPort() {
			return true
		}
		if time.Since(lastJoin) > 250*time.Millisecond { // each rejected try logs a conflict
			lastJoin = time.Now()
			_, _ = c2.Join([]string{cl.a.Addr()})
		}
		return false
	})
	ev = cl.ea.wait(t, EventJoin, "c")
	if ev.Member.Meta.ID != "id-c" {
		t.Errorf("rejoin event meta = %+v", ev.Member.Meta)
	}
}

func TestUpdateMetaPropagates(t *testing.T) {
	cl := newCluster(t)
	nm := cl.c.cfg.Meta
	nm.AZ = "eu-b"
	nm.HTTPAddr = "127.0.0.1:9999"
	nm.Version = "0.0.1-test"
	if err := cl.c.UpdateMeta(nm); err != nil {
		t.Fatalf("UpdateMeta: %v", err)
	}
	if got := cl.c.Local().Meta; got != nm {
		t.Errorf("Local().Meta = %+v, want %+v", got, nm)
	}
	for _, l := range []*eventLog{cl.ea, cl.eb} {
		waitFor(t, "update event with new meta", func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, ev := range l.events {
				if ev.Type == EventUpdate && ev.Member.Name == "c" && ev.Member.Meta == nm {
					return true
				}
			}
			return false
		})
	}
	for _, p := range cl.all() {
		waitFor(t, p.cfg.NodeName+" to list c's new meta", func() bool {
			m, ok := member(p, "c")
			return ok && m.Meta == nm && m.Status == StatusAlive
		})
	}
}

func TestOversizedMetaIsAClearError(t *testing.T) {
	big := testMeta("x", RoleServer, strings.Repeat("r", 600))
	_, err := New(Config{NodeName: "x", BindAddr: "127.0.0.1", Meta: big, Logger: testLogger(t, "x"), Fast: true})
	if !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("New with oversized meta: err = %v, want ErrMetaTooLarge", err)
	}
	if !strings.Contains(err.Error(), "512") {
		t.Errorf("error should state the limit: %v", err)
	}

	p := newTestPool(t, "y", testMeta("y", RoleServer, "eu"))
	before := p.Local().Meta
	big.ID = "id-y"
	if err := p.UpdateMeta(big); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("UpdateMeta with oversized meta: err = %v, want ErrMetaTooLarge", err)
	}
	if got := p.Local().Meta; got != before {
		t.Errorf("rejected update changed Local().Meta to %+v", got)
	}
}

func TestConfigValidation(t *testing.T) {
	good := testMeta("v", RoleClient, "eu")
	for name, cfg := range map[string]Config{
		"no name":   {Meta: good},
		"no id":     {NodeName: "v", Meta: Meta{Role: RoleClient}},
		"bad role":  {NodeName: "v", Meta: Meta{ID: "x", Role: "janitor"}},
		"bad port":  {NodeName: "v", Meta: good, BindPort: 70000},
		"short key": {NodeName: "v", Meta: good, BindAddr: "127.0.0.1", SecretKey: []byte("short")},
	} {
		cfg.Logger = testLogger(t, "v")
		if p, err := New(cfg); err == nil {
			_ = p.Shutdown()
			t.Errorf("%s: New succeeded, want error", name)
		}
	}
}

func TestShutdownIsIdempotentAndClosesEvents(t *testing.T) {
	p := newTestPool(t, "s", testMeta("s", RoleServer, "eu"))
	if err := p.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := p.Shutdown(); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	// Drain the buffered self-join; the channel must then be closed.
	waitFor(t, "events channel to be closed", func() bool {
		select {
		case _, ok := <-p.Events():
			return !ok
		default:
			return false
		}
	})
	if err := p.Leave(time.Second); !errors.Is(err, ErrShutdown) {
		t.Errorf("Leave after Shutdown = %v, want ErrShutdown", err)
	}
	if _, err := p.Join([]string{"127.0.0.1:1"}); !errors.Is(err, ErrShutdown) {
		t.Errorf("Join after Shutdown = %v, want ErrShutdown", err)
	}
	if err := p.UpdateMeta(testMeta("s", RoleServer, "us")); !errors.Is(err, ErrShutdown) {
		t.Errorf("UpdateMeta after Shutdown = %v, want ErrShutdown", err)
	}
}

func TestEncryptedPool(t *testing.T) {
	key := []byte("0123456789abcdef")
	mk := func(name string, key []byte) *Pool {
		p, err := New(Config{NodeName: name, BindAddr: "127.0.0.1", Meta: testMeta(name, RoleServer, "eu"),
			Logger: testLogger(t, name), Fast: true, SecretKey: key})
		if err != nil {
			t.Fatalf("New(%s): %v", name, err)
		}
		t.Cleanup(func() { _ = p.Shutdown() })
		return p
	}
	a, b := mk("ea", key), mk("eb", key)
	if _, err := b.Join([]string{a.Addr()}); err != nil {
		t.Fatalf("Join with shared key: %v", err)
	}
	waitFor(t, "a to see b", func() bool { return hasStatus(a, "eb", StatusAlive) })

	other := mk("ec", []byte("fedcba9876543210"))
	if _, err := other.Join([]string{a.Addr()}); err == nil {
		t.Errorf("Join with a different key succeeded")
	}
}

func TestEventsDropOldestWhenFull(t *testing.T) {
	p := &Pool{events: make(chan Event, 2), logger: testLogger(t, "drop")}
	p.mu.Lock()
	for _, n := range []string{"1", "2", "3"} {
		p.emitLocked(Event{Type: EventJoin, Member: Member{Name: n}})
	}
	p.mu.Unlock()
	var got []string
	for range 2 {
		got = append(got, (<-p.events).Member.Name)
	}
	if !reflect.DeepEqual(got, []string{"2", "3"}) || p.DroppedEvents() != 1 {
		t.Fatalf("after overflow got %v (dropped %d), want [2 3] (dropped 1)", got, p.DroppedEvents())
	}
}
