package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func updateInstance(s *Server, args *structs.InstanceUpdateRequest) (*structs.Instance, error) {
	var resp structs.InstanceUpdateResponse
	err := s.RPC("Instance.Update", args, &resp)
	return resp.Instance, err
}

func TestInstanceUpdateNameAndDescription(t *testing.T) {
	t.Parallel()
	// No scheduler workers: the instance stays BUILD, deterministically.
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	seedFlavors(t, s)
	var created structs.InstanceCreateResponse
	if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "web", Description: "first",
		FlavorID: "1", ImageID: "cirros"}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.Instances[0].ID
	if created.Instances[0].Description != "first" {
		t.Fatalf("description at create %q", created.Instances[0].Description)
	}
	name, desc := "web-2", ""
	inst, err := updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, Name: &name, Description: &desc})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Name != "web-2" || inst.Description != "" || inst.UpdatedAt <= created.Instances[0].UpdatedAt {
		t.Fatalf("updated %+v", inst)
	}

	blank, long := " ", string(make([]byte, 256))
	for what, args := range map[string]*structs.InstanceUpdateRequest{
		"nothing":     {InstanceID: id},
		"blank name":  {InstanceID: id, Name: &blank},
		"long desc":   {InstanceID: id, Description: &long},
		"no instance": {Name: &name},
		"long value":  {InstanceID: id, SetMetadata: map[string]string{"k": long}},
	} {
		if _, err := updateInstance(s, args); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%s: %v", what, err)
		}
	}
	if _, err := updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: "nope", Name: &name}); structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("missing instance: %v", err)
	}
	// Metadata changes wait for a stable state, as in Nova.
	_, err = updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, SetMetadata: map[string]string{"a": "1"}})
	if structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("metadata change while building: %v", err)
	}
}

func TestInstanceUpdateMetadata(t *testing.T) {
	t.Parallel()
	// No scheduler workers: with no hosts a worker would put the
	// instance in ERROR (NoValidHost) while the test makes it ACTIVE.
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	seedFlavors(t, s)
	var created structs.InstanceCreateResponse
	if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "db", FlavorID: "1", ImageID: "cirros",
		Metadata: map[string]string{"keep": "1", "drop": "2"}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.Instances[0].ID
	// Make the instance ACTIVE without an agent: the FSM is the only
	// writer, so go through an entry as the agent's report would.
	inst, _ := s.fsm.State().InstanceByID(nil, id)
	active := inst.Copy()
	active.VMState, active.TaskState = structs.VMStateActive, ""
	if err := s.fsm.State().UpsertInstance(inst.ModifyIndex, active); err != nil {
		t.Fatal(err)
	}

	got, err := updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id,
		SetMetadata: map[string]string{"new": "3"}, DeleteMetadata: []string{"drop"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Metadata) != 2 || got.Metadata["keep"] != "1" || got.Metadata["new"] != "3" {
		t.Fatalf("merged metadata %v", got.Metadata)
	}
	_, err = updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, DeleteMetadata: []string{"drop"}})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete of a missing key: %v", err)
	}
	got, err = updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, ReplaceMetadata: true,
		SetMetadata: map[string]string{"only": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Metadata) != 1 || got.Metadata["only"] != "x" {
		t.Fatalf("replaced metadata %v", got.Metadata)
	}
	got, err = updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, ReplaceMetadata: true})
	if err != nil || len(got.Metadata) != 0 {
		t.Fatalf("cleared metadata %v: %v", got, err)
	}
	many := map[string]string{}
	for i := range maxMetadataItems + 1 {
		many[string(rune('a'+i%26))+string(rune('0'+i/26))] = "v"
	}
	_, err = updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, SetMetadata: many})
	if structs.KindOf(err) != structs.KindQuotaReached {
		t.Fatalf("too many items: %v", err)
	}
}
