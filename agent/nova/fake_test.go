package nova

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/structs"
)

// fakeRPC is an in-memory stand-in for the servers' endpoints, with the
// same error kinds, so tests exercise the wire format alone.
type fakeRPC struct {
	mu        sync.Mutex
	flavors   map[string]*structs.Flavor
	instances map[string]*structs.Instance
	hosts     map[string]*structs.Host
	keypairs  map[string]*structs.KeyPair // "user/name"
	index     uint64
	calls     []fakeCall
	fail      map[string]error // method → error to return
	ext       *fakeExt         // server groups, aggregates, quotas (placement_fake_test.go)
}

type fakeCall struct {
	method string
	args   any
}

func newFakeRPC() *fakeRPC {
	f := &fakeRPC{flavors: map[string]*structs.Flavor{}, instances: map[string]*structs.Instance{},
		hosts: map[string]*structs.Host{}, keypairs: map[string]*structs.KeyPair{}, fail: map[string]error{}}
	for _, fl := range structs.DevFlavors() {
		f.index++
		fl.CreateIndex, fl.ModifyIndex = f.index, f.index
		f.flavors[fl.ID] = fl
	}
	return f
}

// lastCall returns the last call of a method, or nil.
func (f *fakeRPC) lastCall(method string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].method == method {
			return f.calls[i].args
		}
	}
	return nil
}

func (f *fakeRPC) addHost(h *structs.Host) *structs.Host {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	h.CreateIndex, h.ModifyIndex = f.index, f.index
	f.hosts[h.ID] = h
	return h
}

func (f *fakeRPC) addInstance(inst *structs.Instance) *structs.Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	inst.CreateIndex, inst.ModifyIndex = f.index, f.index
	if inst.ID == "" {
		inst.ID = uuid.NewString()
	}
	f.instances[inst.ID] = inst
	return inst
}

func notFoundErr(what, id string) error {
	return structs.Errorf(structs.KindNotFound, "%s %q not found", what, id)
}

// RPC implements RPC.
func (f *fakeRPC) RPC(method string, args, reply any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{method, args})
	if err := f.fail[method]; err != nil {
		return err
	}
	f.index++
	if handled, err := f.extRPC(method, args, reply); handled {
		return err
	}
	switch method {
	case "Flavor.List":
		out := reply.(*structs.FlavorListResponse)
		for _, fl := range f.flavors {
			out.Flavors = append(out.Flavors, fl.Copy())
		}
		sort.Slice(out.Flavors, func(i, j int) bool {
			a, b := out.Flavors[i].ID, out.Flavors[j].ID
			return len(a) < len(b) || len(a) == len(b) && a < b
		})
	case "Flavor.Get":
		id := args.(*structs.FlavorSpecificRequest).ID
		fl := f.flavors[id]
		for _, c := range f.flavors {
			if fl == nil && c.Name == id {
				fl = c
			}
		}
		if fl == nil {
			return notFoundErr("flavor", id)
		}
		reply.(*structs.SingleFlavorResponse).Flavor = fl.Copy()
	case "Flavor.Upsert":
		req := args.(*structs.FlavorUpsertRequest)
		for _, fl := range req.Flavors {
			if err := fl.Validate(); err != nil {
				return err
			}
			if _, ok := f.flavors[fl.ID]; ok && req.CreateOnly {
				return structs.Errorf(structs.KindConflict, "flavor with id %q already exists", fl.ID)
			}
			c := fl.Copy()
			c.ModifyIndex = f.index
			if c.CreateIndex == 0 {
				c.CreateIndex = f.index
			}
			f.flavors[c.ID] = c
			out := reply.(*structs.FlavorUpsertResponse)
			out.Flavors = append(out.Flavors, c.Copy())
		}
	case "Flavor.Delete":
		for _, id := range args.(*structs.FlavorDeleteRequest).IDs {
			if f.flavors[id] == nil {
				return notFoundErr("flavor", id)
			}
			delete(f.flavors, id)
		}
	case "Instance.Create":
		return f.createInstances(args.(*structs.InstanceCreateRequest), reply.(*structs.InstanceCreateResponse))
	case "Instance.List":
		req := args.(*structs.InstanceListRequest)
		out := reply.(*structs.InstanceListResponse)
		for _, inst := range f.instances {
			if (req.ProjectID == "" || inst.ProjectID == req.ProjectID) && (req.HostID == "" || inst.HostID == req.HostID) {
				out.Instances = append(out.Instances, inst.Copy())
			}
		}
		sort.Slice(out.Instances, func(i, j int) bool { return out.Instances[i].ID < out.Instances[j].ID })
	case "Instance.Get":
		id := args.(*structs.InstanceSpecificRequest).InstanceID
		if f.instances[id] == nil {
			return notFoundErr("instance", id)
		}
		reply.(*structs.SingleInstanceResponse).Instance = f.instances[id].Copy()
	case "Instance.Delete":
		for _, id := range args.(*structs.InstanceDeleteRequest).InstanceIDs {
			if f.instances[id] == nil {
				return notFoundErr("instance", id)
			}
			delete(f.instances, id)
		}
	case "Instance.Action":
		req := args.(*structs.InstanceActionRequest)
		inst := f.instances[req.InstanceID]
		if inst == nil {
			return notFoundErr("instance", req.InstanceID)
		}
		if req.Action == "start" && inst.VMState != structs.VMStateStopped {
			return structs.Errorf(structs.KindConflict, "cannot start instance %s while it is in vm_state %s", inst.ID, inst.VMState)
		}
	case "Instance.Update":
		return f.updateInstance(args.(*structs.InstanceUpdateRequest), reply.(*structs.InstanceUpdateResponse))
	case "Host.List":
		out := reply.(*structs.HostListResponse)
		for _, h := range f.hosts {
			out.Hosts = append(out.Hosts, h.Copy())
		}
	case "Host.Get":
		id := args.(*structs.HostSpecificRequest).HostID
		if f.hosts[id] == nil {
			return notFoundErr("host", id)
		}
		reply.(*structs.SingleHostResponse).Host = f.hosts[id].Copy()
	case "Host.UpdateEnabled":
		req := args.(*structs.HostUpdateEnabledRequest)
		h := f.hosts[req.HostID]
		if h == nil {
			return notFoundErr("host", req.HostID)
		}
		h.Enabled, h.DisabledReason = req.Enabled, req.Reason
	case "KeyPair.Create":
		kp := *args.(*structs.KeyPairCreateRequest).KeyPair
		if err := kp.Validate(); err != nil {
			return err
		}
		if f.keypairs[kp.UserID+"/"+kp.Name] != nil {
			return structs.Errorf(structs.KindConflict, "key pair %q already exists", kp.Name)
		}
		kp.CreatedAt, kp.CreateIndex, kp.ModifyIndex = time.Now().UnixNano(), f.index, f.index
		f.keypairs[kp.UserID+"/"+kp.Name] = &kp
		c := kp
		reply.(*structs.SingleKeyPairResponse).KeyPair = &c
	case "KeyPair.List":
		user := args.(*structs.KeyPairListRequest).UserID
		out := reply.(*structs.KeyPairListResponse)
		for _, kp := range f.keypairs {
			if kp.UserID == user {
				c := *kp
				out.KeyPairs = append(out.KeyPairs, &c)
			}
		}
		sort.Slice(out.KeyPairs, func(i, j int) bool { return out.KeyPairs[i].Name < out.KeyPairs[j].Name })
	case "KeyPair.Get":
		req := args.(*structs.KeyPairSpecificRequest)
		kp := f.keypairs[req.UserID+"/"+req.Name]
		if kp == nil {
			return notFoundErr("key pair", req.Name)
		}
		c := *kp
		reply.(*structs.SingleKeyPairResponse).KeyPair = &c
	case "KeyPair.Delete":
		req := args.(*structs.KeyPairDeleteRequest)
		for _, n := range req.Names {
			if f.keypairs[req.UserID+"/"+n] == nil {
				return notFoundErr("key pair", n)
			}
			delete(f.keypairs, req.UserID+"/"+n)
		}
	default:
		return fmt.Errorf("fake rpc: unknown method %s", method)
	}
	return nil
}

func (f *fakeRPC) createInstances(req *structs.InstanceCreateRequest, out *structs.InstanceCreateResponse) error {
	fl := f.flavors[req.FlavorID]
	if fl == nil {
		return structs.Errorf(structs.KindInvalid, "flavor %q not found", req.FlavorID)
	}
	count := max(req.Count, 1)
	res := "r-" + uuid.NewString()[:8]
	now := time.Now().UnixNano()
	for n := 1; n <= count; n++ {
		name := req.Name
		if count > 1 {
			name = fmt.Sprintf("%s-%d", req.Name, n)
		}
		inst := &structs.Instance{ID: uuid.NewString(), Name: name, Description: req.Description, ProjectID: req.ProjectID,
			UserID: req.UserID, ReservationID: res, FlavorID: fl.ID, Flavor: fl.Copy(), ImageID: req.ImageID,
			KeyName: req.KeyName, AZ: req.AZ, VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling,
			Metadata: req.Metadata, CreatedAt: now, UpdatedAt: now, CreateIndex: f.index, ModifyIndex: f.index}
		f.instances[inst.ID] = inst
		out.Instances = append(out.Instances, inst.Copy())
	}
	return nil
}

func (f *fakeRPC) updateInstance(req *structs.InstanceUpdateRequest, out *structs.InstanceUpdateResponse) error {
	inst := f.instances[req.InstanceID]
	if inst == nil {
		return notFoundErr("instance", req.InstanceID)
	}
	if req.ChangesMetadata() && inst.VMState != structs.VMStateActive {
		return structs.Errorf(structs.KindConflict, "cannot update metadata of instance %s while it is in vm_state %s", inst.ID, inst.VMState)
	}
	for _, k := range req.DeleteMetadata {
		if _, ok := inst.Metadata[k]; !ok {
			return structs.Errorf(structs.KindNotFound, "metadata item %q not found", k)
		}
	}
	c := inst.Copy()
	(&structs.InstanceUpdateEntry{Name: req.Name, Description: req.Description, ReplaceMetadata: req.ReplaceMetadata,
		SetMetadata: req.SetMetadata, DeleteMetadata: req.DeleteMetadata, Hostname: req.Hostname, KeyName: req.KeyName,
		ReplaceTags: req.ReplaceTags, AddTags: req.AddTags, RemoveTags: req.RemoveTags, AccessIPv4: req.AccessIPv4, AccessIPv6: req.AccessIPv6,
		UpdatedAt: time.Now().UnixNano()}).Apply(c)
	f.instances[c.ID] = c
	out.Instance = c.Copy()
	return nil
}

// fakeVerifier knows a fixed set of tokens.
type fakeVerifier map[string]*identity.Token

func (v fakeVerifier) Verify(token string) (*identity.Token, error) {
	if t, ok := v[token]; ok {
		return t, nil
	}
	return nil, structs.Errorf(structs.KindPermission, "invalid token")
}

type errString string

func (e errString) Error() string { return string(e) }

var errNoLeader = structs.ErrNoLeader
