package server

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/stratus-cloud/stratus/structs"
)

// TestCompactEntryDecodesAsTheFullOne fills every field of the entries
// the leader writes compactly (and every struct they hold) and checks
// that each decodes from encodeCompactEntry's bytes exactly as from
// structs.EncodeEntry's: all fields set, every other field zero, and
// empty but non-nil lists and maps. A field added to these types later
// is covered without changing the test.
func TestCompactEntryDecodesAsTheFullOne(t *testing.T) {
	bodies := []any{
		&structs.PlanApplyEntry{}, &structs.InstanceCreateEntry{}, &structs.InstanceCreateBatchEntry{},
		&structs.AllocClientUpdateEntry{}, &structs.AllocClientUpdateBatchEntry{},
	}
	for _, body := range bodies {
		for _, mode := range []fillMode{fillAll, fillAlternate, fillEmpty} {
			name := fmt.Sprintf("%T/%s", body, mode)
			t.Run(name, func(t *testing.T) {
				v := reflect.New(reflect.TypeOf(body).Elem())
				(&filler{mode: mode}).fill(v.Elem(), 0)
				full, err := structs.EncodeEntry(structs.PlanApplyType, v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				compact, err := encodeCompactEntry(structs.PlanApplyType, v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				want, got := decodeEntryAs(t, full, v.Type()), decodeEntryAs(t, compact, v.Type())
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("compact entry decodes differently:\nfull    %#v\ncompact %#v", want, got)
				}
				if mode == fillAlternate && len(compact) >= len(full) {
					t.Errorf("compact entry is %d bytes, the full one %d", len(compact), len(full))
				}
			})
		}
	}
}

// TestCompactPlanEntryIsSmaller checks the point of it on a plan of
// placed allocations as the applier writes them.
func TestCompactPlanEntryIsSmaller(t *testing.T) {
	res := map[string]int64{structs.ResourceVCPU: 1, structs.ResourceMemoryMB: 512, structs.ResourceDiskGB: 1}
	e := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{}, UpdatedAt: time.Now().UnixNano()}
	ev := &structs.Evaluation{ID: "e-1", TriggeredBy: structs.EvalTriggerCreate, Status: structs.EvalStatusComplete, CreatedAt: 1}
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		ev.InstanceIDs = append(ev.InstanceIDs, id)
		e.Placements = append(e.Placements, &structs.Allocation{ID: "a" + id[1:], InstanceID: id, HostID: "sim-00001",
			EvalID: ev.ID, Resources: res, DesiredState: structs.AllocDesiredRunning})
	}
	e.Evals = append(e.Evals, ev)
	full, err := structs.EncodeEntry(structs.PlanApplyType, e)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := encodeCompactEntry(structs.PlanApplyType, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100 placements: %d bytes full, %d compact", len(full), len(compact))
	if len(compact)*10 > len(full)*7 {
		t.Errorf("compact plan entry %d bytes, want under 70%% of %d", len(compact), len(full))
	}
	if want, got := decodeEntryAs(t, full, reflect.TypeOf(e)), decodeEntryAs(t, compact, reflect.TypeOf(e)); !reflect.DeepEqual(want, got) {
		t.Fatal("compact plan entry decodes differently")
	}
}

func decodeEntryAs(t *testing.T, data []byte, typ reflect.Type) any {
	t.Helper()
	_, _, body, err := structs.DecodeEntry(data)
	if err != nil {
		t.Fatal(err)
	}
	out := reflect.New(typ.Elem())
	if err := structs.Decode(body, out.Interface()); err != nil {
		t.Fatal(err)
	}
	return out.Interface()
}

type fillMode string

const (
	fillAll       fillMode = "all"
	fillAlternate fillMode = "alternate"
	fillEmpty     fillMode = "empty-lists"
)

// filler sets fields to distinct non-zero values.
type filler struct {
	mode fillMode
	n    int
}

func (f *filler) fill(v reflect.Value, depth int) {
	f.n++
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(int64(f.n) * int64(time.Second))
			return
		}
		v.SetInt(int64(f.n%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.n%100 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.n) + 0.5)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.n))
	case reflect.Pointer:
		if depth > 4 {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		f.fillStruct(v, depth)
	case reflect.Slice:
		f.fillSlice(v, depth)
	case reflect.Map:
		f.fillMap(v, depth)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("any%d", f.n)))
	}
}

func (f *filler) fillStruct(v reflect.Value, depth int) {
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Unix(int64(1_700_000_000+f.n), 0).UTC()))
		return
	}
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() || (f.mode == fillAlternate && i%2 == 1) {
			continue
		}
		f.fill(v.Field(i), depth+1)
	}
}

func (f *filler) fillSlice(v reflect.Value, depth int) {
	if depth > 4 {
		return
	}
	if f.mode == fillEmpty && v.Type().Elem().Kind() != reflect.Uint8 {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		return
	}
	s := reflect.MakeSlice(v.Type(), 2, 2)
	for i := 0; i < 2; i++ {
		f.fill(s.Index(i), depth+1)
	}
	v.Set(s)
}

func (f *filler) fillMap(v reflect.Value, depth int) {
	if depth > 4 {
		return
	}
	m := reflect.MakeMap(v.Type())
	if f.mode != fillEmpty {
		for i := 0; i < 2; i++ {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k, depth+1)
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
	}
	v.Set(m)
}

// BenchmarkEntryPath is what one plan entry of 200 placements and one
// 100-instance create entry cost on the way through a 3-server cluster,
// apart from the FSMs' own tables: encoded once by the leader, then on
// each of three servers stored in its bbolt log (checksummed) and
// decoded. It compares the full encoding and bbolt's defaults (before)
// with compact entries and the log store's options (after).
//
//	go test -run '^$' -bench BenchmarkEntryPath -count 3 ./server
func BenchmarkEntryPath(b *testing.B) {
	plan, create := benchPlanEntry(200), benchCreateEntry(100)
	// base entries were written and compacted away first, as Raft does
	// after a snapshot: the file keeps their pages on its free list
	// (STRATUS_BENCH_ENTRY_BASE; 4,000, 200 under STRATUS_BENCH_SMALL).
	base := uint64(benchSize("STRATUS_BENCH_ENTRY_BASE", 4000, 200))
	for _, c := range []struct {
		name    string
		compact bool
		opts    *bbolt.Options
	}{
		{"full,bolt-defaults", false, nil},
		{"full,no-freelist-sync", false, raftBoltOptions()},
		{"compact,bolt-defaults", true, nil},
		{"compact,no-freelist-sync", true, raftBoltOptions()},
	} {
		b.Run(c.name, func(b *testing.B) {
			var stores []*checksumStore
			for i := 0; i < 3; i++ {
				path := filepath.Join(b.TempDir(), "raft.db")
				bolt, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: c.opts, NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = bolt.Close() })
				st, err := newChecksumStore(bolt, path)
				if err != nil {
					b.Fatal(err)
				}
				stores = append(stores, st)
				compactedLog(b, st, base)
			}
			encode := structs.EncodeEntry
			if c.compact {
				encode = encodeCompactEntry
			}
			var size int
			b.ReportAllocs()
			b.ResetTimer()
			cpuStart := processCPU()
			for n := 0; n < b.N; n++ {
				for k, body := range []any{plan, create} {
					t := []structs.MessageType{structs.PlanApplyType, structs.InstanceCreateType}[k]
					data, err := encode(t, body)
					if err != nil {
						b.Fatal(err)
					}
					size += len(data)
					for _, st := range stores {
						l := &raft.Log{Index: base + uint64(2*n+k+1), Term: 1, Type: raft.LogCommand, Data: data}
						if err := st.StoreLogs([]*raft.Log{l}); err != nil {
							b.Fatal(err)
						}
						_, _, raw, _ := structs.DecodeEntry(data)
						out := reflect.New(reflect.TypeOf(body).Elem()).Interface()
						if err := structs.Decode(raw, out); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			// CPU, not wall-clock time: the machine's other load
			// stretches the latter.
			b.ReportMetric(float64((processCPU()-cpuStart).Nanoseconds())/float64(b.N*300), "cpu-ns/placement")
			b.ReportMetric(float64(size)/float64(b.N*300), "entry-B/placement")
		})
	}
}

// benchPlanEntry is a plan entry as the applier writes it: n placed
// allocations of one evaluation of n instances.
func benchPlanEntry(n int) *structs.PlanApplyEntry {
	res := map[string]int64{structs.ResourceVCPU: 1, structs.ResourceMemoryMB: 512, structs.ResourceDiskGB: 1}
	e := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{}, UpdatedAt: time.Now().UnixNano()}
	ev := &structs.Evaluation{ID: uuid.NewString(), TriggeredBy: structs.EvalTriggerCreate, Status: structs.EvalStatusComplete, CreatedAt: 1}
	for i := 0; i < n; i++ {
		id := uuid.NewString()
		ev.InstanceIDs = append(ev.InstanceIDs, id)
		e.Placements = append(e.Placements, &structs.Allocation{ID: uuid.NewString(), InstanceID: id,
			HostID: fmt.Sprintf("sim-%05d", i), EvalID: ev.ID, Resources: res,
			DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending})
	}
	e.Evals = append(e.Evals, ev)
	return e
}

// benchCreateEntry is a multi-create of n instances as Instance.Create
// builds it.
func benchCreateEntry(n int) *structs.InstanceCreateEntry {
	now := time.Now().UnixNano()
	ev := &structs.Evaluation{ID: uuid.NewString(), TriggeredBy: structs.EvalTriggerCreate, Status: structs.EvalStatusPending, CreatedAt: now}
	e := &structs.InstanceCreateEntry{Eval: ev, RequestID: "req-" + uuid.NewString(), CreatedAt: now, Flavor: structs.DevFlavors()[0]}
	for i := 1; i <= n; i++ {
		inst := &structs.Instance{ID: uuid.NewString(), Name: fmt.Sprintf("b-%d", i), ProjectID: "p1", UserID: "u1",
			ReservationID: "r-12345678", FlavorID: e.Flavor.ID, ImageID: "cirros",
			VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling, PowerState: structs.PowerNoState,
			CreatedAt: now, UpdatedAt: now}
		e.Instances = append(e.Instances, inst)
		ev.InstanceIDs = append(ev.InstanceIDs, inst.ID)
	}
	return e
}

// compactedLog writes n entries of 32 KiB to st and deletes them, as
// Raft's log compaction does, leaving their pages free in the file.
func compactedLog(b *testing.B, st *checksumStore, n uint64) {
	b.Helper()
	data := make([]byte, 32<<10)
	for i := uint64(1); i <= n; i += 100 {
		var logs []*raft.Log
		for j := i; j < i+100 && j <= n; j++ {
			logs = append(logs, &raft.Log{Index: j, Term: 1, Type: raft.LogCommand, Data: data})
		}
		if err := st.StoreLogs(logs); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.DeleteRange(1, n); err != nil {
		b.Fatal(err)
	}
}

// TestCompactStructFieldsFallsBackToWholeStructs checks that a struct
// msgpack would not encode field by field is written whole: one that
// embeds another (flattened) or encodes itself.
func TestCompactStructFieldsFallsBackToWholeStructs(t *testing.T) {
	type inner struct{ A string }
	type embedding struct {
		inner
		B string
	}
	type tagged struct {
		Name string `codec:"n,omitempty"`
		Skip string `json:"-"`
		JSON []int  `json:",omitempty"`
	}
	if f := structFields(reflect.TypeOf(embedding{})); f != nil {
		t.Errorf("struct with an embedded one: fields %v, want it written whole", f)
	}
	if f := structFields(reflect.TypeOf(time.Time{})); f != nil {
		t.Errorf("time.Time: fields %v, want it written whole", f)
	}
	want := []compactField{{name: "n", index: 0, omitEmpty: true}, {name: "JSON", index: 2, omitEmpty: true}}
	if f := structFields(reflect.TypeOf(tagged{})); !reflect.DeepEqual(f, want) {
		t.Errorf("tagged struct: fields %+v, want %+v", f, want)
	}
}
