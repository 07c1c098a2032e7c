package robustness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratus-cloud/stratus/api"
)

const (
	regWorkers = 4
	// keysPerObject shared keys live on each of sharedInstances
	// instances (metadata items) and on one flavor (extra specs): two
	// keys of one object catch an update of one key that rewrites the
	// other with what it read before (a lost update).
	keysPerObject   = 2
	sharedInstances = 2
)

// register is one shared key: an instance's metadata item or a flavor's
// extra spec, written through the Nova API and read through /v1.
type register struct {
	name     string // the key in the history
	instance string // instance ID, or "" for a flavor's extra spec
	flavor   string // flavor ID of an extra spec
	project  string // project of a quota limit (then item is the resource)
	item     string // metadata key / extra spec key
}

// registerSpec says which shared keys setupRegisters creates.
type registerSpec struct {
	instances  int // instances with keysPerObject metadata keys each
	flavors    int // flavors no boot uses, with flavorKeys extra specs each
	flavorKeys int
	// quotas are limits of adminProject the workload never reaches
	// (key pairs, server groups), written and read through Nova.
	quotas []string
}

// setupRegisters creates what the shared keys live on: flavors no boot
// uses (so their extra specs never steer the scheduler) and instances no
// worker acts on.
func setupRegisters(t *testing.T, admin *api.Client, spec registerSpec) []register {
	t.Helper()
	var regs []register
	for i := 0; i < spec.flavors; i++ {
		id := fmt.Sprintf("robshared%d", i)
		if _, _, err := admin.Flavors().Create(&api.Flavor{ID: id, Name: "rob.shared." + id, VCPUs: 1, MemoryMB: 256, RootGB: 1, IsPublic: true}); err != nil {
			t.Fatalf("create a shared flavor: %v", err)
		}
		for k := 0; k < spec.flavorKeys; k++ {
			item := fmt.Sprintf("rob:k%d", k)
			regs = append(regs, register{name: fmt.Sprintf("flavor%d/%s", i, item), flavor: id, item: item})
		}
	}
	for _, res := range spec.quotas {
		regs = append(regs, register{name: "quota/" + res, project: adminProject, item: res})
	}
	for i := 0; i < spec.instances; i++ {
		resp, _, err := admin.Instances().Create(&api.InstanceCreateRequest{Name: fmt.Sprintf("rob-shared-%d", i), Flavor: flavorID, Image: "cirros"})
		if err != nil || len(resp.Instances) != 1 {
			t.Fatalf("create a shared instance: %v", err)
		}
		id := resp.Instances[0].ID
		for k := 0; k < keysPerObject; k++ {
			item := fmt.Sprintf("k%d", k)
			regs = append(regs, register{name: fmt.Sprintf("instance%d/%s", i, item), instance: id, item: item})
		}
	}
	return regs
}

// runRegisterWorker writes and reads the shared keys through random
// agents until stop closes. Writes go through the Nova API (any agent
// forwards them to the leader); reads go through /v1 on a random agent,
// half of them with ?stale.
func runRegisterWorker(t *testing.T, c *cluster, rh *regHistory, w int, regs []register, seq *atomic.Int64, rng *rand.Rand, stop chan struct{}) {
	procs := c.all()
	hc := &http.Client{Timeout: 30 * time.Second}
	for {
		select {
		case <-stop:
			return
		default:
		}
		p := procs[rng.Intn(len(procs))]
		reg := regs[rng.Intn(len(regs))]
		client := 1000 + w // apart from the instance workers' IDs
		if rng.Float64() < 0.4 {
			value := fmt.Sprintf("w%d-%d", w, seq.Add(1))
			if reg.project != "" {
				value = fmt.Sprint(1000 + seq.Add(1)) // a limit is a number
			}
			call := rh.now()
			out := putRegister(hc, p.http, reg, value)
			rh.recordWrite(client, reg.name, value, p.name, out, call)
		} else {
			readRegister(t, rh, client, p, reg, rng.Intn(2) == 0)
		}
		time.Sleep(time.Duration(10+rng.Intn(60)) * time.Millisecond)
	}
}

// readRegister reads one key through /v1 and records the answer; a read
// that fails is not recorded (it observed nothing).
func readRegister(t *testing.T, rh *regHistory, client int, p *proc, reg register, stale bool) {
	if reg.project != "" {
		// Nova's quota API has no stale reads.
		call := rh.now()
		if value, err := readQuota(p.http, reg); err == nil {
			rh.recordRead(client, reg.name, value, p.name, call)
		}
		return
	}
	cl := newClient(t, p.http)
	q := &api.QueryOptions{AllowStale: stale}
	incarnation := p.incarnationNow()
	call := rh.now()
	var value string
	var meta *api.QueryMeta
	var err error
	if reg.instance != "" {
		var inst *api.Instance
		inst, meta, err = cl.Instances().Info(reg.instance, q)
		if err == nil {
			value = inst.Metadata[reg.item]
		}
	} else {
		var f *api.Flavor
		f, meta, err = cl.Flavors().Info(reg.flavor, q)
		if err == nil {
			value = f.ExtraSpecs[reg.item]
		}
	}
	if err != nil {
		return
	}
	if !stale {
		rh.recordRead(client, reg.name, value, p.name, call)
		return
	}
	s := staleRead{Key: reg.name, Value: value, Table: "flavors", Index: meta.LastIndex, Call: call, Ret: rh.now()}
	if reg.instance != "" {
		s.Table = "instances"
	}
	// A read a server answered itself, from one incarnation, must be
	// monotone; one a client agent forwarded may reach any server.
	if p.server && p.incarnationNow() == incarnation {
		s.Server, s.Incarnation = p.name, incarnation
	}
	rh.recordStale(s)
}

// putRegister writes one key through the Nova API of the agent at base.
func putRegister(hc *http.Client, base string, reg register, value string) opOutput {
	var path string
	var body any
	switch {
	case reg.project != "":
		limit, err := strconv.Atoi(value)
		if err != nil {
			return opOutput{Result: resFail, Err: err.Error()}
		}
		path = "/compute/v2.1/os-quota-sets/" + url.PathEscape(reg.project)
		body = map[string]any{"quota_set": map[string]int{reg.item: limit}}
	case reg.instance != "":
		path = "/compute/v2.1/servers/" + url.PathEscape(reg.instance) + "/metadata/" + url.PathEscape(reg.item)
		body = map[string]any{"meta": map[string]string{reg.item: value}}
	default:
		path = "/compute/v2.1/flavors/" + url.PathEscape(reg.flavor) + "/os-extra_specs/" + url.PathEscape(reg.item)
		body = map[string]string{reg.item: value}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return opOutput{Result: resFail, Err: err.Error()}
	}
	req, err := http.NewRequest(http.MethodPut, base+path, bytes.NewReader(raw))
	if err != nil {
		return opOutput{Result: resFail, Err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", adminToken)
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return opOutput{Result: resFail, Err: err.Error()}
		}
		return opOutput{Result: resUnknown, Err: err.Error()}
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_ = resp.Body.Close()
	return classifyStatus(resp.StatusCode, string(msg))
}

// classifyStatus is classify for a raw HTTP answer: 2xx happened, 4xx
// (but a timeout) did not, anything else may have.
func classifyStatus(code int, msg string) opOutput {
	switch {
	case code >= 200 && code < 300:
		return opOutput{Result: resOK}
	case code == http.StatusNotFound:
		return opOutput{Result: resNotFound, Err: msg}
	case code >= 400 && code < 500 && code != http.StatusRequestTimeout:
		return opOutput{Result: resFail, Err: msg}
	}
	return opOutput{Result: resUnknown, Err: fmt.Sprintf("%d %s", code, msg)}
}

// checkRegisterHistory runs the register checks and reports each
// problem; an illegal history is written out for porcupine's viewer.
func checkRegisterHistory(t *testing.T, rh *regHistory) {
	ops := rh.snapshot()
	rh.mu.Lock()
	stales := append([]staleRead(nil), rh.stales...)
	failed := rh.failed
	rh.mu.Unlock()
	counts := map[string]int{}
	for _, op := range ops {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		counts[in.Kind+"/"+out.Result]++
	}
	counts["stale-read"] = len(stales)
	counts["write/fail"] = len(failed)
	t.Logf("register history: %d operations %v", len(ops), counts)
	rh.mu.Lock()
	for why, n := range rh.whyFailed {
		t.Logf("  %d writes failed: %s", n, why)
	}
	rh.mu.Unlock()
	if counts[regWrite+"/"+resOK] == 0 || counts[regRead+"/"+resOK] == 0 || len(stales) == 0 {
		t.Errorf("the register workload did not run: %v", counts)
	}
	res, info, problems := checkRegisters(ops, stales, failed, 60*time.Second)
	if res == porcupine.Illegal {
		path := t.TempDir() + "/registers.html"
		if f, err := os.Create(path); err == nil {
			_ = porcupine.Visualize(registerModel, info, f)
			_ = f.Close()
		}
		t.Logf("visualization: %s", path)
		for _, part := range registerModel.Partition(ops) {
			if porcupine.CheckOperations(registerModel, part) {
				continue
			}
			t.Logf("key %s is not linearizable:", part[0].Input.(regInput).Key)
			for _, op := range part {
				t.Logf("  %.3fs-%s c%d: %s", float64(op.Call)/1e9, retString(op.Return), op.ClientId, registerModel.DescribeOperation(op.Input, op.Output))
			}
		}
	}
	for i, p := range problems {
		if i == 20 {
			t.Errorf("... and %d more", len(problems)-i)
			break
		}
		t.Error(p)
	}
	if len(problems) == 0 {
		t.Logf("register history is linearizable; stale reads are consistent")
	}
}

func retString(ret int64) string {
	if ret == int64(^uint64(0)>>1) {
		return "∞"
	}
	return fmt.Sprintf("%.3fs", float64(ret)/1e9)
}
