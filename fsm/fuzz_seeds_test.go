package fsm

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// fuzzEntryBodies are the body types the FSM's handlers decode, by
// message type: FuzzApply's seeds encode one real value of each, so the
// fuzzer mutates msgpack with the right field names and shapes instead
// of discovering them byte by byte.
var fuzzEntryBodies = map[structs.MessageType]any{
	structs.AggregateUpdateType:         &structs.AggregateEntry{},
	structs.AllocClientUpdateType:       &structs.AllocClientUpdateEntry{},
	structs.AllocClientUpdateBatchType:  &structs.AllocClientUpdateBatchEntry{},
	structs.ClusterCASetType:            &structs.ClusterCASetRequest{},
	structs.ConsoleTokenCreateType:      &structs.ConsoleTokenCreateEntry{},
	structs.ConsoleTokenConsumeType:     &structs.ConsoleTokenConsumeEntry{},
	structs.EvalUpdateType:              &structs.EvalUpdateEntry{},
	structs.FlavorUpsertRequestType:     &structs.FlavorUpsertRequest{},
	structs.FlavorDeleteRequestType:     &structs.FlavorDeleteRequest{},
	structs.HostRegisterType:            &structs.HostRegisterEntry{},
	structs.HostStatusUpdateType:        &structs.HostStatusUpdateEntry{},
	structs.HostEnabledUpdateType:       &structs.HostEnabledUpdateEntry{},
	structs.IdentityUpsertType:          &structs.IdentityUpsertEntry{},
	structs.IdentityDeleteType:          &structs.IdentityDeleteEntry{},
	structs.SigningKeyUpsertType:        &structs.SigningKeyEntry{},
	structs.TokenRevokeType:             &structs.TokenRevokeEntry{},
	structs.ImageUpsertType:             &structs.ImageUpsertEntry{},
	structs.ImageDeleteType:             &structs.ImageDeleteEntry{},
	structs.ImageDataType:               &structs.ImageDataEntry{},
	structs.ImageLocationType:           &structs.ImageLocationEntry{},
	structs.ImageMemberType:             &structs.ImageMemberEntry{},
	structs.InstanceGroupRegisterType:   &structs.InstanceGroupRegisterEntry{},
	structs.InstanceGroupStopType:       &structs.InstanceGroupStopEntry{},
	structs.InstanceGroupDeploymentType: &structs.InstanceGroupDeploymentEntry{},
	structs.InstanceGroupDeleteType:     &structs.InstanceGroupDeleteEntry{},
	structs.InstancePasswordSetType:     &structs.InstancePasswordEntry{},
	structs.InstancePasswordClearType:   &structs.InstancePasswordEntry{},
	structs.InstanceUpdateType:          &structs.InstanceUpdateEntry{},
	structs.InstanceCreateType:          &structs.InstanceCreateEntry{},
	structs.InstanceCreateBatchType:     &structs.InstanceCreateBatchEntry{},
	structs.InstanceDeleteType:          &structs.InstanceDeleteEntry{},
	structs.InstanceActionType:          &structs.InstanceActionEntry{},
	structs.KeyPairUpsertRequestType:    &structs.KeyPairUpsertRequest{},
	structs.KeyPairDeleteRequestType:    &structs.KeyPairDeleteRequest{},
	structs.NetApplyType:                &structs.NetApplyEntry{},
	structs.NetLeaseReportType:          &structs.NetLeaseReportRequest{},
	structs.PlanApplyType:               &structs.PlanApplyEntry{},
	structs.QuotaUpdateType:             &structs.QuotaEntry{},
	structs.S3BucketType:                &structs.S3BucketEntry{},
	structs.S3ObjectType:                &structs.S3ObjectEntry{},
	structs.S3MultipartType:             &structs.S3MultipartEntry{},
	structs.EC2CredentialType:           &structs.EC2CredentialEntry{},
	structs.ApplicationCredentialType:   &structs.ApplicationCredentialEntry{},
	structs.SchedulerConfigSetType:      &structs.SchedulerSetConfigEntry{},
	structs.ServerGroupCreateType:       &structs.ServerGroupCreateEntry{},
	structs.ServerGroupDeleteType:       &structs.ServerGroupDeleteEntry{},
	structs.SnapshotProgressType:        &structs.SnapshotProgressEntry{},
	structs.InstanceTaskType:            &structs.InstanceTaskEntry{},
	structs.FlavorAccessType:            &structs.FlavorAccessEntry{},
	structs.HostForceDownType:           &structs.HostForceDownEntry{},
	structs.HostDeregisterType:          &structs.HostDeregisterEntry{},
	structs.InstanceActionRecordType:    &structs.InstanceActionRecordEntry{},
	structs.UserQuotaUpdateType:         &structs.UserQuotaEntry{},
	structs.ImageCacheRequestType:       &structs.ImageCacheEntry{},
	structs.CreateRequestPurgeType:      &structs.CreateRequestPurgeEntry{},
	structs.EvalReapType:                &structs.EvalReapEntry{},
	structs.DeletedPurgeType:            &structs.DeletedPurgeEntry{},
	structs.VolumeCreateType:            &structs.VolumeCreateEntry{},
	structs.VolumeUpdateType:            &structs.VolumeUpdateEntry{},
	structs.VolumeDeleteType:            &structs.VolumeDeleteEntry{},
	structs.VolumeSnapshotCreateType:    &structs.VolumeSnapshotCreateEntry{},
	structs.VolumeSnapshotUpdateType:    &structs.VolumeSnapshotUpdateEntry{},
	structs.VolumeSnapshotDeleteType:    &structs.VolumeSnapshotDeleteEntry{},
	structs.VolumeTypeUpsertType:        &structs.VolumeTypeUpsertEntry{},
	structs.VolumeTypeDeleteType:        &structs.VolumeTypeDeleteEntry{},
	structs.VolumeQuotaUpdateType:       &structs.QuotaEntry{},
}

// fuzzIDs are the ids populate's objects have, chosen for fields by
// name so that filled entries name existing objects.
var fuzzIDs = []struct{ prefix, id string }{
	{"Instance", "i1"}, {"Host", "h1"}, {"TargetHost", "h1"}, {"Flavor", "1"}, {"Alloc", "a1"}, {"Eval", "e1"},
	{"User", "u"}, {"Project", "p1"}, {"Request", "req-1"}, {"Migration", "m"},
}

// fillValue sets every field of v (recursively, depth levels deep) to a
// plausible non-zero value: ids of populate's objects where a field's
// name says what it names, one element in slices and maps.
func fillValue(v reflect.Value, name string, depth int) {
	if depth < 0 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fuzzString(name))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		if depth == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillValue(p.Elem(), name, depth-1)
		v.Set(p)
	case reflect.Slice:
		if depth == 0 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillValue(s.Index(0), strings.TrimSuffix(name, "s"), depth-1)
		v.Set(s)
	case reflect.Map:
		if depth == 0 || v.Type().Key().Kind() != reflect.String {
			return
		}
		m := reflect.MakeMap(v.Type())
		val := reflect.New(v.Type().Elem()).Elem()
		fillValue(val, name, depth-1)
		m.SetMapIndex(reflect.ValueOf(fuzzString(name)).Convert(v.Type().Key()), val)
		v.Set(m)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fillValue(v.Field(i), t.Field(i).Name, depth-1)
			}
		}
	}
}

// fuzzString is a string for a field named name.
func fuzzString(name string) string {
	for _, c := range fuzzIDs {
		if strings.HasPrefix(name, c.prefix+"ID") || strings.HasPrefix(name, c.prefix+"UUID") {
			return c.id
		}
	}
	switch name {
	case "ID", "UUID":
		return "i1"
	case "VMState":
		return structs.VMStateActive
	case "Status":
		return "active"
	}
	return "x"
}

// realEntries are entries as the servers write them, over populate's
// objects: creates, updates, plans and deletes that succeed.
func realEntries() []struct {
	t    structs.MessageType
	body any
} {
	tiny := structs.DevFlavors()[0]
	inst := &structs.Instance{ID: "i2", Name: "db", ProjectID: "p1", UserID: "u", FlavorID: tiny.ID, Flavor: tiny,
		ImageID: "cirros", VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling, Metadata: map[string]string{"k": "v"},
		CreatedAt: 1, UpdatedAt: 1}
	eval := &structs.Evaluation{ID: "e2", InstanceIDs: []string{"i2"}, Status: structs.EvalStatusPending}
	name := "renamed"
	return []struct {
		t    structs.MessageType
		body any
	}{
		{structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}},
		{structs.FlavorDeleteRequestType, &structs.FlavorDeleteRequest{IDs: []string{"5"}}},
		{structs.KeyPairUpsertRequestType, &structs.KeyPairUpsertRequest{KeyPairs: []*structs.KeyPair{{Name: "k2", UserID: "u", Type: "ssh", PublicKey: "ssh-ed25519 A"}}}},
		{structs.KeyPairDeleteRequestType, &structs.KeyPairDeleteRequest{UserID: "u", Names: []string{"k"}}},
		{structs.HostRegisterType, &structs.HostRegisterEntry{Host: &structs.Host{ID: "h2", Name: "hv2", Status: structs.HostStatusUp, Enabled: true,
			Inventories: map[string]*structs.Inventory{structs.ResourceVCPU: {Total: 4, MaxUnit: 4, MinUnit: 1, StepSize: 1, AllocationRatio: 1}}}}},
		{structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{HostIDs: []string{"h1"}, Status: structs.HostStatusDown, UpdatedAt: 2}},
		{structs.HostEnabledUpdateType, &structs.HostEnabledUpdateEntry{HostID: "h1", Enabled: false, Reason: "maintenance"}},
		{structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{inst}, Eval: eval, Flavor: tiny, RequestID: "req-2", CreatedAt: 1}},
		{structs.InstanceCreateBatchType, &structs.InstanceCreateBatchEntry{Entries: []*structs.InstanceCreateEntry{
			{Instances: []*structs.Instance{{ID: "i3", Name: "b1", FlavorID: tiny.ID, Flavor: tiny, VMState: structs.VMStateBuilding}},
				Eval: &structs.Evaluation{ID: "e3", InstanceIDs: []string{"i3"}, Status: structs.EvalStatusPending}, RequestID: "req-b1", CreatedAt: 1},
			{Instances: []*structs.Instance{inst}, Eval: eval, Flavor: tiny, RequestID: "req-b2", CreatedAt: 1},
		}}},
		{structs.InstanceUpdateType, &structs.InstanceUpdateEntry{InstanceID: "i1", Name: &name, SetMetadata: map[string]string{"x": "y"},
			DeleteMetadata: []string{"a"}, AddTags: []string{"t"}, UpdatedAt: 3}},
		{structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Deleting: []string{"i1"}, UpdatedAt: 3, RequestID: "req-3", UserID: "u"}},
		{structs.EvalUpdateType, &structs.EvalUpdateEntry{Evals: []*structs.Evaluation{{ID: "e1", InstanceIDs: []string{"i1"}, Status: structs.EvalStatusComplete}}}},
		{structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h1",
			Resources: map[string]int64{structs.ResourceVCPU: 1}}}, Evals: []*structs.Evaluation{{ID: "e1", Status: structs.EvalStatusComplete}}, UpdatedAt: 4}},
		{structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1", Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: "running", PowerState: structs.PowerRunning}}, UpdatedAt: 5}},
		{structs.AllocClientUpdateBatchType, &structs.AllocClientUpdateBatchEntry{Entries: []*structs.AllocClientUpdateEntry{
			{HostID: "h1", Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: "running", PowerState: structs.PowerRunning}}, UpdatedAt: 5},
			{HostID: "h2", Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: "running"}}, UpdatedAt: 5},
		}}},
		{structs.InstancePasswordSetType, &structs.InstancePasswordEntry{InstanceID: "i1", Password: "secret"}},
	}
}

// addEntrySeeds adds FuzzApply's seeds: the real entries above, and for
// every message type a value of its body type with every field filled
// (at two depths: shallow values pass more checks, deep ones reach
// nested types).
func addEntrySeeds(f *testing.F) {
	for _, e := range realEntries() {
		body, err := structs.Encode(e.body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(e.t), structs.EntryVersion, body)
	}
	for t, proto := range fuzzEntryBodies {
		if _, ok := applyHandlers[t]; !ok {
			f.Fatalf("no handler for seed type %s", t)
		}
		for _, depth := range []int{3, 6} {
			v := reflect.New(reflect.TypeOf(proto).Elem())
			fillValue(v.Elem(), "", depth)
			body, err := structs.Encode(v.Interface())
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(t), structs.EntryVersion, body)
		}
	}
	for t := range applyHandlers {
		if _, ok := fuzzEntryBodies[t]; !ok {
			f.Logf("message type %s has no seed body in fuzzEntryBodies: add one", t)
		}
	}
}
