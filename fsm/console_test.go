package fsm

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// populateConsoles stores a console token for populate's instance i1.
func populateConsoles(t *testing.T, s *StateStore) {
	t.Helper()
	if err := s.CreateConsoleToken(6, testConsoleToken("tok", "i1", "h1", 1, int64(time.Hour))); err != nil {
		t.Fatal(err)
	}
}

func testConsoleToken(token, inst, host string, created, expires int64) *structs.ConsoleAuthToken {
	return &structs.ConsoleAuthToken{TokenHash: structs.HashConsoleToken(token), InstanceID: inst,
		ConsoleType: structs.ConsoleTypeNoVNC, HostID: host, Target: "127.0.0.1:5900", CreatedAt: created, ExpiresAt: expires}
}

// consoleFSM is an FSM with an instance i1 on host h1.
func consoleFSM(t *testing.T) *FSM {
	t.Helper()
	f := testFSM(t)
	if err := f.State().UpsertInstance(1, &structs.Instance{ID: "i1", Name: "web", HostID: "h1", VMState: structs.VMStateActive}); err != nil {
		t.Fatal(err)
	}
	return f
}

func consume(t *testing.T, f *FSM, index uint64, e *structs.ConsoleTokenConsumeEntry) any {
	t.Helper()
	return apply(t, f, index, structs.ConsoleTokenConsumeType, e)
}

func TestConsoleTokenIsUsableOnce(t *testing.T) {
	f := consoleFSM(t)
	tok := testConsoleToken("secret", "i1", "h1", 100, 200)
	if resp := apply(t, f, 2, structs.ConsoleTokenCreateType, &structs.ConsoleTokenCreateEntry{Token: tok}); resp != nil {
		t.Fatalf("create: %v", resp)
	}
	got, err := f.State().ConsoleToken(nil, structs.HashConsoleToken("secret"))
	if err != nil || got == nil || got.CreateIndex != 2 {
		t.Fatalf("stored token %+v, %v", got, err)
	}
	// Wrong type or host: refused, and the token stays.
	for _, e := range []*structs.ConsoleTokenConsumeEntry{
		{TokenHash: tok.TokenHash, ConsoleType: structs.ConsoleTypeSerial, Now: 150},
		{TokenHash: tok.TokenHash, HostID: "h2", Now: 150},
	} {
		if resp := consume(t, f, 3, e); structs.KindOf(asErr(resp)) != structs.KindNotFound {
			t.Fatalf("mismatched consume answered %v", resp)
		}
	}
	resp := consume(t, f, 4, &structs.ConsoleTokenConsumeEntry{TokenHash: tok.TokenHash, ConsoleType: structs.ConsoleTypeNoVNC, HostID: "h1", Now: 150})
	used, ok := resp.(*structs.ConsoleAuthToken)
	if !ok || used.Target != "127.0.0.1:5900" || used.InstanceID != "i1" {
		t.Fatalf("consume answered %#v", resp)
	}
	if resp := consume(t, f, 5, &structs.ConsoleTokenConsumeEntry{TokenHash: tok.TokenHash, Now: 150}); structs.KindOf(asErr(resp)) != structs.KindNotFound {
		t.Fatalf("second consume answered %v", resp)
	}
	if idx := f.State().Index(TableConsoleTokens); idx != 4 {
		t.Fatalf("table index %d, want 4 (refusals write nothing)", idx)
	}
}

func TestConsoleTokenExpiresByTheEntrysClock(t *testing.T) {
	f := consoleFSM(t)
	tok := testConsoleToken("secret", "i1", "h1", 100, 200)
	if resp := apply(t, f, 2, structs.ConsoleTokenCreateType, &structs.ConsoleTokenCreateEntry{Token: tok}); resp != nil {
		t.Fatalf("create: %v", resp)
	}
	if resp := consume(t, f, 3, &structs.ConsoleTokenConsumeEntry{TokenHash: tok.TokenHash, Now: 200}); structs.KindOf(asErr(resp)) != structs.KindNotFound {
		t.Fatalf("expired consume answered %v", resp)
	}
	// A purge at a time before expiry keeps it; after, removes it.
	if resp := consume(t, f, 4, &structs.ConsoleTokenConsumeEntry{Purge: true, Now: 150}); resp != nil {
		t.Fatalf("purge: %v", resp)
	}
	if got, _ := f.State().ConsoleToken(nil, tok.TokenHash); got == nil {
		t.Fatal("purge before expiry removed the token")
	}
	if resp := consume(t, f, 5, &structs.ConsoleTokenConsumeEntry{Purge: true, Now: 250}); resp != nil {
		t.Fatalf("purge: %v", resp)
	}
	if got, _ := f.State().ConsoleToken(nil, tok.TokenHash); got != nil {
		t.Fatal("purge after expiry kept the token")
	}
}

func TestConsoleTokenFollowsItsInstance(t *testing.T) {
	f := consoleFSM(t)
	// A token for a host the instance is not on, or a missing instance,
	// is refused.
	for _, tok := range []*structs.ConsoleAuthToken{
		testConsoleToken("a", "i1", "h2", 1, 10), testConsoleToken("b", "nope", "h1", 1, 10),
		{TokenHash: "short", InstanceID: "i1", HostID: "h1", Target: "x", ConsoleType: "novnc", CreatedAt: 1, ExpiresAt: 2},
	} {
		if resp := apply(t, f, 2, structs.ConsoleTokenCreateType, &structs.ConsoleTokenCreateEntry{Token: tok}); resp == nil {
			t.Fatalf("token %+v was stored", tok)
		}
	}
	tok := testConsoleToken("c", "i1", "h1", 1, 10)
	if resp := apply(t, f, 3, structs.ConsoleTokenCreateType, &structs.ConsoleTokenCreateEntry{Token: tok}); resp != nil {
		t.Fatalf("create: %v", resp)
	}
	// The instance moves: the token can no longer be used, and a purge
	// removes it though it has not expired.
	if err := f.State().UpsertInstance(4, &structs.Instance{ID: "i1", Name: "web", HostID: "h2", VMState: structs.VMStateActive}); err != nil {
		t.Fatal(err)
	}
	if resp := consume(t, f, 5, &structs.ConsoleTokenConsumeEntry{TokenHash: tok.TokenHash, Now: 2}); resp == nil || asErr(resp) == nil {
		t.Fatalf("consume after a move answered %v", resp)
	}
	if resp := consume(t, f, 6, &structs.ConsoleTokenConsumeEntry{Purge: true, Now: 2}); resp != nil {
		t.Fatalf("purge: %v", resp)
	}
	if toks, _ := f.State().ConsoleTokens(nil); len(toks) != 0 {
		t.Fatalf("tokens after purge: %d", len(toks))
	}
}

func TestConsoleTokenSurvivesSnapshotRestore(t *testing.T) {
	f := consoleFSM(t)
	tok := testConsoleToken("snap", "i1", "h1", 1, 1000)
	if resp := apply(t, f, 2, structs.ConsoleTokenCreateType, &structs.ConsoleTokenCreateEntry{Token: tok}); resp != nil {
		t.Fatalf("create: %v", resp)
	}
	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	want, _ := f.State().ConsoleToken(nil, tok.TokenHash)
	got, _ := g.State().ConsoleToken(nil, tok.TokenHash)
	if got == nil || !reflect.DeepEqual(want, got) {
		t.Fatalf("restored token %+v, want %+v", got, want)
	}
	// The restored token is still usable exactly once.
	if resp := consume(t, g, 3, &structs.ConsoleTokenConsumeEntry{TokenHash: tok.TokenHash, Now: 5}); asErr(resp) != nil {
		t.Fatalf("consume after restore: %v", resp)
	}
	if resp := consume(t, g, 4, &structs.ConsoleTokenConsumeEntry{TokenHash: tok.TokenHash, Now: 5}); asErr(resp) == nil {
		t.Fatal("restored token was usable twice")
	}
}

// asErr is an Apply response as an error (nil for anything else).
func asErr(resp any) error {
	err, _ := resp.(error)
	return err
}
