package server

import (
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestConsoleTokensThroughRaft: a token is authorized for an instance on
// its host, consumed exactly once by concurrent proxies, refused for the
// wrong type or host, shown to os-console-auth-tokens until used, and an
// expired one is refused and purged by the leader.
func TestConsoleTokensThroughRaft(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	registerHost(t, s, testHost("h1", 8, 16384))
	inst := waitSettled(t, s, ids(createInstances(t, s, "vm", "m1.small", 1)))
	var vm *structs.Instance
	for _, i := range inst {
		vm = i
	}
	if vm.HostID != "h1" {
		t.Fatalf("instance not placed: %+v", vm)
	}
	authorize := func(host string, ttl time.Duration) (string, error) {
		var out structs.ConsoleAuthorizeResponse
		err := s.RPC("Console.Authorize", &structs.ConsoleAuthorizeRequest{InstanceID: vm.ID, ConsoleType: structs.ConsoleTypeNoVNC,
			HostID: host, Target: "127.0.0.1:5901", TTL: ttl}, &out)
		return out.Token, err
	}
	if _, err := authorize("h2", 0); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("a token for another host: %v", err)
	}
	if _, err := authorize("h1", 48*time.Hour); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a token with a two-day TTL: %v", err)
	}
	tok, err := authorize("h1", 0)
	if err != nil || len(tok) < 32 {
		t.Fatalf("authorize: %q, %v", tok, err)
	}
	if stored, _ := s.fsm.State().ConsoleTokens(nil); len(stored) != 1 || stored[0].TokenHash == tok {
		t.Fatalf("stored tokens %+v: want one, hashed", stored)
	}
	var shown structs.ConsoleTokenResponse
	if err := s.RPC("Console.Get", &structs.ConsoleTokenRequest{Token: tok}, &shown); err != nil || shown.Token.Target != "127.0.0.1:5901" {
		t.Fatalf("Console.Get: %+v, %v", shown.Token, err)
	}
	consume := func(typ, host string) error {
		return s.RPC("Console.Consume", &structs.ConsoleConsumeRequest{Token: tok, ConsoleType: typ, HostID: host}, &structs.ConsoleTokenResponse{})
	}
	if err := consume(structs.ConsoleTypeSerial, "h1"); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("consume as serial: %v", err)
	}
	if err := consume(structs.ConsoleTypeNoVNC, "h2"); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("consume on another host: %v", err)
	}
	// Ten proxies race for the token: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if consume(structs.ConsoleTypeNoVNC, "h1") == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d consumers got the token, want 1", wins)
	}
	if err := s.RPC("Console.Get", &structs.ConsoleTokenRequest{Token: tok}, &shown); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("Console.Get of a used token: %v", err)
	}

	expired, err := authorize("h1", time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Console.Consume", &structs.ConsoleConsumeRequest{Token: expired}, &structs.ConsoleTokenResponse{}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("consume an expired token: %v", err)
	}
	if err := s.purgeConsoleTokens(); err != nil {
		t.Fatal(err)
	}
	if stored, _ := s.fsm.State().ConsoleTokens(nil); len(stored) != 0 {
		t.Fatalf("tokens after the purge: %+v", stored)
	}
}
