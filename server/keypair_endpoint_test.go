package server

import (
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

const testPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtestkeytestkeytestkeytestkeytestkeytestkey alice@example"

func createKeyPair(s *Server, user, name string) (*structs.SingleKeyPairResponse, error) {
	var resp structs.SingleKeyPairResponse
	err := s.RPC("KeyPair.Create", &structs.KeyPairCreateRequest{KeyPair: &structs.KeyPair{
		Name: name, UserID: user, Type: "ssh", PublicKey: testPublicKey,
	}}, &resp)
	return &resp, err
}

func TestKeyPairCreateGetListDelete(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)

	before := time.Now().UnixNano()
	created, err := createKeyPair(s, "alice", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	kp := created.KeyPair
	if kp.CreatedAt < before || kp.CreateIndex == 0 || created.Index != kp.CreateIndex {
		t.Fatalf("created %+v index %d", kp, created.Index)
	}
	// The server computes Nova's MD5 fingerprint when none is given.
	if len(kp.Fingerprint) != 47 || kp.Fingerprint[2] != ':' {
		t.Fatalf("fingerprint %q", kp.Fingerprint)
	}

	// The same name for the same user conflicts; another user may use it.
	if _, err := createKeyPair(s, "alice", "laptop"); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, err := createKeyPair(s, "bob", "laptop"); err != nil {
		t.Fatal(err)
	}

	var got structs.SingleKeyPairResponse
	if err := s.RPC("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: "alice", Name: "laptop"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.KeyPair.Fingerprint != kp.Fingerprint || got.KeyPair.CreatedAt != kp.CreatedAt || got.Index == 0 {
		t.Fatalf("get %+v", got.KeyPair)
	}
	err = s.RPC("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: "carol", Name: "laptop"}, &got)
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("get of another user's name: %v", err)
	}

	var list structs.KeyPairListResponse
	if err := s.RPC("KeyPair.List", &structs.KeyPairListRequest{UserID: "alice"}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.KeyPairs) != 1 || list.KeyPairs[0].Name != "laptop" {
		t.Fatalf("alice's keypairs %+v", list.KeyPairs)
	}

	if err := s.RPC("KeyPair.Delete", &structs.KeyPairDeleteRequest{UserID: "alice", Names: []string{"laptop"}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	err = s.RPC("KeyPair.Delete", &structs.KeyPairDeleteRequest{UserID: "alice", Names: []string{"laptop"}}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.RPC("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: "bob", Name: "laptop"}, &got); err != nil {
		t.Fatalf("bob's key pair went with alice's: %v", err)
	}
}

func TestKeyPairCreateValidates(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	for name, kp := range map[string]*structs.KeyPair{
		"no keypair":     nil,
		"bad name":       {Name: "a/b", UserID: "u", Type: "ssh", PublicKey: testPublicKey},
		"no user":        {Name: "k", Type: "ssh", PublicKey: testPublicKey},
		"bad type":       {Name: "k", UserID: "u", Type: "pgp", PublicKey: testPublicKey},
		"no key":         {Name: "k", UserID: "u", Type: "ssh"},
		"not openssh":    {Name: "k", UserID: "u", Type: "ssh", PublicKey: "garbage"},
		"not base64":     {Name: "k", UserID: "u", Type: "ssh", PublicKey: "ssh-rsa !!!! c"},
		"x509 no finger": {Name: "k", UserID: "u", Type: "x509", PublicKey: "-----BEGIN CERTIFICATE-----"},
	} {
		err := s.RPC("KeyPair.Create", &structs.KeyPairCreateRequest{KeyPair: kp}, &structs.SingleKeyPairResponse{})
		if structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, args := range map[string]any{
		"list without user":   &structs.KeyPairListRequest{},
		"get without name":    &structs.KeyPairSpecificRequest{UserID: "u"},
		"delete without name": &structs.KeyPairDeleteRequest{UserID: "u"},
	} {
		method := map[string]string{"list without user": "KeyPair.List", "get without name": "KeyPair.Get", "delete without name": "KeyPair.Delete"}[name]
		var reply any = &structs.KeyPairListResponse{}
		switch method {
		case "KeyPair.Get":
			reply = &structs.SingleKeyPairResponse{}
		case "KeyPair.Delete":
			reply = &structs.GenericResponse{}
		}
		if err := s.RPC(method, args, reply); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestKeyPairConcurrentCreatesOneWins(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := createKeyPair(s, "alice", "race")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch structs.KindOf(err) {
		case "":
			ok++
		case structs.KindConflict:
		default:
			t.Errorf("create: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d creates succeeded, want 1", ok)
	}
}

func TestKeyPairListBlocks(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	created, err := createKeyPair(s, "alice", "one")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *structs.KeyPairListResponse, 1)
	go func() {
		var list structs.KeyPairListResponse
		err := s.RPC("KeyPair.List", &structs.KeyPairListRequest{UserID: "alice",
			QueryOptions: structs.QueryOptions{MinQueryIndex: created.Index, MaxQueryTime: 10 * time.Second}}, &list)
		if err != nil {
			t.Error(err)
		}
		done <- &list
	}()
	select {
	case <-done:
		t.Fatal("blocking list returned before a change")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := createKeyPair(s, "alice", "two"); err != nil {
		t.Fatal(err)
	}
	select {
	case list := <-done:
		if len(list.KeyPairs) != 2 || list.Index <= created.Index {
			t.Fatalf("woken list %+v at %d", list.KeyPairs, list.Index)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("blocking list did not wake")
	}
}
