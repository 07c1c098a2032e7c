package fsm

import (
	"bytes"
	"io"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func secretHost(id, secret string) *structs.Host {
	h := &structs.Host{ID: id, Name: "hv-" + id, Enabled: true}
	if secret != "" {
		h.SecretHash = structs.HashNodeSecret(secret)
	}
	return h
}

func TestHostSecretHashKeptAcrossRegistrationsAndSnapshots(t *testing.T) {
	f := testFSM(t)
	if resp := apply(t, f, 1, structs.HostRegisterType, &structs.HostRegisterEntry{Host: secretHost("h1", "a")}); resp != nil {
		t.Fatalf("register: %v", resp)
	}
	// Another secret, or none, cannot take the host over, even if the
	// endpoint's check raced.
	for i, h := range []*structs.Host{secretHost("h1", "b"), secretHost("h1", "")} {
		if resp := apply(t, f, uint64(2+i), structs.HostRegisterType, &structs.HostRegisterEntry{Host: h}); structs.KindOf(asErr(resp)) != structs.KindPermission {
			t.Fatalf("re-registration %d: %v", i, resp)
		}
	}
	if resp := apply(t, f, 4, structs.HostRegisterType, &structs.HostRegisterEntry{Host: secretHost("h1", "a")}); resp != nil {
		t.Fatalf("re-register with the same secret: %v", resp)
	}
	// Status updates keep the hash.
	if resp := apply(t, f, 5, structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{HostIDs: []string{"h1"}, Status: structs.HostStatusDown}); resp != nil {
		t.Fatalf("status: %v", resp)
	}
	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	h, _ := g.State().HostByID(nil, "h1")
	if h == nil || !structs.NodeSecretMatches(h.SecretHash, "a") || structs.NodeSecretMatches(h.SecretHash, "b") {
		t.Fatalf("restored host %+v", h)
	}
}
