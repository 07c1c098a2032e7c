package scheduler

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// sliceState is a State over a slice of hosts.
type sliceState []*structs.Host

func (s sliceState) Hosts() ([]*structs.Host, error) { return s, nil }

type hostOpt func(*structs.Host)

// testHost is an up, enabled host with 16 VCPU (ratio 4), 32 GiB of RAM
// (512 MB reserved) and 500 GB of disk, nothing used.
func testHost(id string, opts ...hostOpt) *structs.Host {
	h := &structs.Host{
		ID: id, Name: id, Status: structs.HostStatusUp, Enabled: true, AZ: "nova",
		Arch: "x86_64", HypervisorType: "QEMU", HypervisorVersion: "8.2.0",
		Inventories: map[string]*structs.Inventory{
			structs.ResourceVCPU:     {Total: 16, MinUnit: 1, StepSize: 1, AllocationRatio: 4},
			structs.ResourceMemoryMB: {Total: 32768, Reserved: 512, MinUnit: 1, StepSize: 1, AllocationRatio: 1},
			structs.ResourceDiskGB:   {Total: 500, MinUnit: 1, StepSize: 1, AllocationRatio: 1},
		},
		Usage: map[string]int64{},
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

func withInv(class string, total int64) hostOpt {
	return func(h *structs.Host) {
		h.Inventories[class] = &structs.Inventory{Total: total, MinUnit: 1, StepSize: 1, AllocationRatio: 1}
	}
}

func withoutInv(class string) hostOpt {
	return func(h *structs.Host) { delete(h.Inventories, class) }
}

func withUsage(class string, n int64) hostOpt {
	return func(h *structs.Host) { h.Usage[class] = n }
}

func withTraits(traits ...string) hostOpt {
	return func(h *structs.Host) { h.Traits = append(h.Traits, traits...) }
}

func withAZ(az string) hostOpt { return func(h *structs.Host) { h.AZ = az } }

func withAttr(k, v string) hostOpt {
	return func(h *structs.Host) {
		if h.Attributes == nil {
			h.Attributes = map[string]string{}
		}
		h.Attributes[k] = v
	}
}

// testFlavor builds a flavor; specs are "key=value" extra specs.
func testFlavor(vcpus, memMB, diskGB int, specs ...string) *structs.Flavor {
	f := &structs.Flavor{ID: "f", Name: "f", VCPUs: vcpus, MemoryMB: memMB, RootGB: diskGB, ExtraSpecs: map[string]string{}}
	for _, s := range specs {
		k, v, _ := strings.Cut(s, "=")
		f.ExtraSpecs[k] = v
	}
	return f
}

func testInstance(id string, f *structs.Flavor) *structs.Instance {
	return &structs.Instance{ID: id, Name: id, Flavor: f, VMState: structs.VMStateBuilding}
}

// small is 1 VCPU, 1 GiB, 10 GB.
func small(specs ...string) *structs.Flavor { return testFlavor(1, 1024, 10, specs...) }

func mustRequest(t testing.TB, inst *structs.Instance) *Request {
	t.Helper()
	req, err := NewRequest(inst)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// filterCase is one row of a filter's table test.
type filterCase struct {
	name   string
	host   *structs.Host
	inst   *structs.Instance
	ok     bool
	reason string
}

func runFilterCases(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, reason := f.Filter(NewHostView(c.host), mustRequest(t, c.inst))
			if ok != c.ok || reason != c.reason {
				t.Fatalf("%s: got (%v, %q), want (%v, %q)", f.Name(), ok, reason, c.ok, c.reason)
			}
		})
	}
}
