package gossip

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var (
	keyOld = []byte("0123456789abcdef0123456789abcdef")
	keyNew = []byte("fedcba9876543210fedcba9876543210")
)

// newKeyedPool starts an encrypted Fast pool on loopback whose keyring
// persists in dir.
func newKeyedPool(t *testing.T, name, dir string, key []byte) *Pool {
	t.Helper()
	p, err := New(Config{NodeName: name, BindAddr: "127.0.0.1", Meta: testMeta(name, RoleServer, "eu"),
		Logger: testLogger(t, name), Fast: true, SecretKey: key, KeyringFile: filepath.Join(dir, "gossip.keyring")})
	if err != nil {
		t.Fatalf("New(%s): %v", name, err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

func TestKeyringRotationKeepsMembersAlive(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	a := newKeyedPool(t, "ka", dirs[0], keyOld)
	b := newKeyedPool(t, "kb", dirs[1], keyOld)
	c := newKeyedPool(t, "kc", dirs[2], keyOld)
	for _, p := range []*Pool{b, c} {
		if _, err := p.Join([]string{a.Addr()}); err != nil {
			t.Fatalf("Join: %v", err)
		}
	}
	all := []*Pool{a, b, c}
	allAlive := func() bool {
		for _, p := range all {
			if aliveCount(p) != 3 {
				return false
			}
		}
		return true
	}
	waitFor(t, "3 alive members everywhere", allAlive)

	newB64, oldB64 := EncodeKey(keyNew), EncodeKey(keyOld)
	steps := []struct {
		op      KeyringOp
		key     string
		want    []string // keys on every member afterwards, primary first
		primary string
	}{
		{KeyringInstall, newB64, []string{oldB64, newB64}, oldB64},
		{KeyringUse, newB64, []string{newB64, oldB64}, newB64},
		{KeyringRemove, oldB64, []string{newB64}, newB64},
	}
	for i, st := range steps {
		// Alternate the member that drives the operation.
		resp, err := all[i%3].Keyring(st.op, st.key, time.Minute)
		if err != nil {
			t.Fatalf("%s: %v", st.op, err)
		}
		if resp.Members != 3 || resp.Responses != 3 || len(resp.Errors) != 0 {
			t.Fatalf("%s: response %+v", st.op, resp)
		}
		if resp.PrimaryKeys[st.primary] != 3 || len(resp.Keys) != len(st.want) {
			t.Fatalf("%s: keys %v primary %v", st.op, resp.Keys, resp.PrimaryKeys)
		}
		for _, p := range all {
			got, _ := p.LocalKeys()
			if !slices.Equal(got, st.want) {
				t.Fatalf("after %s, %s holds %v, want %v", st.op, p.cfg.NodeName, got, st.want)
			}
		}
		if !allAlive() {
			t.Fatalf("a member was lost after %s", st.op)
		}
	}
	// Gossip still flows with the new key only: a metadata change spreads.
	m := b.Local().Meta
	m.Version = "rotated"
	if err := b.UpdateMeta(m); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to see b's new metadata", func() bool {
		mb, _ := member(a, "kb")
		return mb.Meta.Version == "rotated"
	})
	// A node with only the old key can no longer join.
	stale := newKeyedPool(t, "kstale", t.TempDir(), keyOld)
	if _, err := stale.Join([]string{a.Addr()}); err == nil {
		t.Error("a node holding only the removed key joined")
	}

	// The keyring file holds the new key, and a restart uses it even
	// though the configuration still names the old key.
	if err := c.Shutdown(); err != nil {
		t.Fatal(err)
	}
	c2 := newKeyedPool(t, "kc", dirs[2], keyOld)
	if got, _ := c2.LocalKeys(); !slices.Equal(got, []string{newB64}) {
		t.Fatalf("restarted member holds %v, want the persisted [new]", got)
	}
	if _, err := c2.Join([]string{a.Addr()}); err != nil {
		t.Fatalf("restarted member cannot rejoin: %v", err)
	}
	waitFor(t, "a to see the restarted member", func() bool { return hasStatus(a, "kc", StatusAlive) })
}

func TestKeyringErrors(t *testing.T) {
	dir := t.TempDir()
	p := newKeyedPool(t, "ke", dir, keyOld)
	if _, err := p.Keyring(KeyringRemove, EncodeKey(keyOld), time.Second); err == nil {
		t.Error("removing the primary key succeeded")
	}
	if _, err := p.Keyring(KeyringUse, EncodeKey(keyNew), time.Second); err == nil {
		t.Error("using a key that is not installed succeeded")
	}
	if _, err := p.Keyring(KeyringInstall, "not base64!", time.Second); err == nil {
		t.Error("installing a malformed key succeeded")
	}
	if _, err := p.Keyring(KeyringInstall, EncodeKey([]byte("short")), time.Second); err == nil {
		t.Error("installing a 5-byte key succeeded")
	}
	if _, err := p.Keyring("rotate", "", time.Second); err == nil {
		t.Error("an unknown operation succeeded")
	}

	plain := newTestPool(t, "kplain", testMeta("kplain", RoleServer, "eu"))
	if _, err := plain.Keyring(KeyringList, "", time.Second); !errors.Is(err, ErrEncryptionDisabled) {
		t.Errorf("keyring on an unencrypted pool: %v", err)
	}

	// A corrupt keyring file is a clear start-up error.
	bad := filepath.Join(t.TempDir(), "gossip.keyring")
	if err := os.WriteFile(bad, []byte(`["nope"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{NodeName: "kbad", BindAddr: "127.0.0.1", Meta: testMeta("kbad", RoleServer, "eu"),
		Logger: testLogger(t, "kbad"), Fast: true, KeyringFile: bad}); err == nil {
		t.Error("New accepted a corrupt keyring file")
	}
}
