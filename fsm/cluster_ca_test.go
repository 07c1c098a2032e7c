package fsm

import (
	"bytes"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateClusterCA fills the cluster CA table for the snapshot tests.
func populateClusterCA(t *testing.T, s *StateStore) {
	t.Helper()
	if err := s.SetClusterCA(6, &structs.ClusterCA{CertPEM: []byte("cert"), KeyPEM: []byte("key"), CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestApplyClusterCAFirstWins(t *testing.T) {
	f := testFSM(t)
	first := &structs.ClusterCA{CertPEM: []byte("cert-1"), KeyPEM: []byte("key-1"), CreatedAt: 1}
	if resp := apply(t, f, 10, structs.ClusterCASetType, &structs.ClusterCASetRequest{CA: first}); resp != nil {
		t.Fatalf("set: %v", resp)
	}
	second := &structs.ClusterCA{CertPEM: []byte("cert-2"), KeyPEM: []byte("key-2"), CreatedAt: 2}
	if resp := apply(t, f, 11, structs.ClusterCASetType, &structs.ClusterCASetRequest{CA: second}); resp != nil {
		t.Fatalf("second set: %v", resp)
	}
	got, err := f.State().ClusterCA(nil)
	if err != nil || got == nil {
		t.Fatalf("ClusterCA: %v %v", got, err)
	}
	if !bytes.Equal(got.CertPEM, first.CertPEM) || got.ID != structs.ClusterCAID || got.CreateIndex != 10 {
		t.Fatalf("stored CA = %+v, want the first one at index 10", got)
	}
	if resp := apply(t, f, 12, structs.ClusterCASetType, &structs.ClusterCASetRequest{CA: &structs.ClusterCA{}}); resp == nil {
		t.Fatal("an empty CA was accepted")
	}
}
