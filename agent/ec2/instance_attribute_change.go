package ec2

import (
	"slices"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// setInstanceType resizes a stopped instance to the flavor named v
// (Instance.Task resize, as the Compute API's resize). The instance
// stays stopped, showing the new type once the resize has finished;
// StartInstances confirms the resize before it powers the instance on
// (instances_actions.go), as EC2 has no step to confirm. A resize
// needs room for the new flavor: on a single host the servers must
// allow a resize to the same host (allow_resize_to_same_host).
func (q *request) setInstanceType(inst *structs.Instance, v string) error {
	if err := mustBeStopped(inst, "instanceType"); err != nil {
		return err
	}
	if v == "" {
		return ec2Error(codeMissingParameter, "The request must contain the parameter InstanceType.Value.")
	}
	var out structs.FlavorListResponse
	if err := q.call("Flavor.List", &structs.FlavorListRequest{}, &out); err != nil {
		return err
	}
	i := slices.IndexFunc(out.Flavors, func(f *structs.Flavor) bool { return f.Name == v && !f.Disabled })
	if i < 0 {
		return ec2Error(codeInvalidParameterValue, "Invalid value '%s' for InstanceType: no such instance type.", v)
	}
	if inst.Flavor != nil && inst.Flavor.ID == out.Flavors[i].ID {
		return nil // already of that type, as EC2 answers it
	}
	args := &structs.InstanceTaskRequest{InstanceID: inst.ID, Op: structs.OpResize, FlavorID: out.Flavors[i].ID,
		ProjectID: q.caller.ProjectID, UserID: q.caller.UserID, IdempotencyKey: retry.NewKey()}
	err := retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		args.Forwarded = false
		return q.call("Instance.Task", args, &structs.InstanceTaskResponse{})
	})
	if err != nil {
		return lockedError(runError(err), instanceID(inst.ID))
	}
	return nil
}

// instancePorts lists an instance's ports.
func (q *request) instancePorts(inst *structs.Instance) ([]*structs.Port, error) {
	var out structs.NetListResponse
	if err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, Caller: q.netCaller(), DeviceIDs: []string{inst.ID}}, &out); err != nil {
		return nil, err
	}
	if len(out.Ports) == 0 {
		return nil, ec2Error(codeIncorrectInstanceState, "The instance '%s' has no network interface.", instanceID(inst.ID))
	}
	return out.Ports, nil
}

// forwardAll are the address pairs that let a port send from any
// address: sourceDestCheck false.
var forwardAll = []structs.AddressPair{{IPAddress: "0.0.0.0/0"}, {IPAddress: "::/0"}}

// sourceDestChecked reports whether a port checks its traffic's
// addresses (has neither pair of forwardAll).
func sourceDestChecked(p *structs.Port) bool {
	for _, pair := range p.AllowedAddressPairs {
		if pair.MACAddress == "" && (pair.IPAddress == "0.0.0.0/0" || pair.IPAddress == "::/0") {
			return false
		}
	}
	return true
}

// setSourceDestCheck adds or removes forwardAll on every port of the
// instance, keeping its other address pairs.
func (q *request) setSourceDestCheck(inst *structs.Instance, v string) error {
	check, err := boolValue("sourceDestCheck", v)
	if err != nil {
		return err
	}
	ports, err := q.instancePorts(inst)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if sourceDestChecked(p) == check {
			continue
		}
		var pairs []structs.AddressPair
		for _, pair := range p.AllowedAddressPairs {
			if !slices.Contains(forwardAll, pair) {
				pairs = append(pairs, pair)
			}
		}
		if !check {
			pairs = append(pairs, forwardAll...)
		}
		err := q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindPort, ID: p.ID, Caller: q.netCaller(),
			Fields: []string{"allowed_address_pairs"}, Port: &structs.Port{AllowedAddressPairs: pairs}}, &structs.NetWriteResponse{})
		if err != nil {
			return err
		}
	}
	return nil
}

// setGroups replaces the security groups of the instance's ports with
// the groups of GroupId.n.
func (q *request) setGroups(inst *structs.Instance, ids []string) error {
	var uuids []string
	for _, id := range ids {
		g, _, err := q.resolveGroup(id, "")
		if err != nil {
			return err
		}
		uuids = append(uuids, g.ID)
	}
	ports, err := q.instancePorts(inst)
	if err != nil {
		return err
	}
	for _, p := range ports {
		err := q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindPort, ID: p.ID, Caller: q.netCaller(),
			Fields: []string{"security_groups"}, Port: &structs.Port{SecurityGroups: uuids}}, &structs.NetWriteResponse{})
		if structs.KindOf(err) == structs.KindConflict {
			return ec2Error(codeInvalidParameterCombo, "The security groups of '%s' cannot change: %s", instanceID(inst.ID), structs.Message(err))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
