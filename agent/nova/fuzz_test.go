package nova

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// fuzzServerID is the server every fuzzed request about a server names.
const fuzzServerID = "5c1f0e2a-9b8d-4c7e-a6f5-3d2c1b0a9e8f"

// fuzzTarget is one request line the fuzzer sends bodies to.
type fuzzTarget struct {
	method, path, token string
}

// fuzzTargets are the request bodies FuzzRequest exercises: server
// create and actions, flavors, keypairs and the other decoders with a
// schema. The fuzzer picks one by index.
var fuzzTargets = []fuzzTarget{
	{"POST", "/servers", memberTok},
	{"POST", "/servers/" + fuzzServerID + "/action", memberTok},
	{"POST", "/servers/" + fuzzServerID + "/action", adminTok},
	{"POST", "/flavors", adminTok},
	{"PUT", "/flavors/1", adminTok},
	{"POST", "/flavors/1/os-extra_specs", adminTok},
	{"POST", "/os-keypairs", memberTok},
	{"PUT", "/servers/" + fuzzServerID, memberTok},
	{"POST", "/servers/" + fuzzServerID + "/metadata", memberTok},
	{"PUT", "/servers/" + fuzzServerID + "/tags", memberTok},
	{"POST", "/os-server-groups", memberTok},
	{"POST", "/os-aggregates", adminTok},
	{"PUT", "/os-quota-sets/p-demo", adminTok},
	{"POST", "/servers/" + fuzzServerID + "/remote-consoles", memberTok},
	{"PUT", "/os-services/disable-log-reason", adminTok},
}

// sampleTargets maps an api_samples directory to its target.
var sampleTargets = map[string]int{
	"servers": 0, "os-multiple-create": 0, "flavor-manage": 3, "flavor-extra-specs": 5, "os-keypairs": 6,
	"os-server-groups": 10, "os-aggregates": 11, "os-quota-sets": 12, "os-remote-consoles": 13,
	"os-console-output": 1, "os-rescue": 1, "os-evacuate": 2, "server-metadata": 8, "os-services": 14,
}

// fuzzActions are server action bodies, seeds for the action targets.
var fuzzActions = []string{
	`{"reboot": {"type": "HARD"}}`, `{"os-stop": null}`, `{"os-start": null}`, `{"pause": null}`,
	`{"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "AUTO"}}`, `{"confirmResize": null}`,
	`{"rebuild": {"imageRef": "cirros", "name": "x", "metadata": {"a": "b"}, "adminPass": "p"}}`,
	`{"createImage": {"name": "snap", "metadata": {"k": "v"}}}`, `{"lock": {"locked_reason": "why"}}`,
	`{"os-migrateLive": {"host": null, "block_migration": "auto"}}`, `{"migrate": {"host": "h1"}}`,
	`{"addSecurityGroup": {"name": "default"}}`, `{"changePassword": {"adminPass": "x"}}`,
	`{"os-getConsoleOutput": {"length": 50}}`, `{"rescue": {"adminPass": "p", "rescue_image_ref": "cirros"}}`,
	`{"trigger_crash_dump": null}`, `{"evacuate": {"host": "h2", "adminPass": "p"}}`, `{"restore": null}`,
}

// fuzzLog collects the API's error log lines.
type fuzzLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *fuzzLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *fuzzLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// addSampleSeeds adds Nova's request samples as seeds for their targets.
func addSampleSeeds(f *testing.F) {
	root := filepath.Join("testdata", "api_samples")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "-req.json") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(rel, string(filepath.Separator))
		target, ok := sampleTargets[parts[0]]
		if !ok {
			return nil
		}
		version := ""
		if len(parts) == 3 && strings.HasPrefix(parts[1], "v") {
			version = parts[1][1:]
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f.Add(uint8(target), version, data)
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
}

// FuzzRequest sends arbitrary bodies (and microversions) to the Compute
// API's decoders and validators, through the real handler over a fake
// RPC that holds one server. Whatever the body, the answer is never a
// panic nor a 5xx other than a deliberate one (501, or the fake lacking
// an RPC method), and every 4xx is a Nova fault body. Seeds are Nova's
// request samples and action bodies; run longer with
// go test -run '^$' -fuzz FuzzRequest -fuzztime 5m ./agent/nova.
func FuzzRequest(f *testing.F) {
	addSampleSeeds(f)
	for _, a := range fuzzActions {
		f.Add(uint8(1), "", []byte(a))
		f.Add(uint8(2), "2.95", []byte(a))
	}
	f.Add(uint8(6), "2.92", []byte(`{"keypair": {"name": "k-1", "type": "ssh", "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA fuzz"}}`))
	f.Add(uint8(4), "2.55", []byte(`{"flavor": {"description": "d"}}`))
	f.Add(uint8(7), "2.19", []byte(`{"server": {"name": "n", "description": "d"}}`))
	f.Add(uint8(9), "2.26", []byte(`{"tags": ["a", "b"]}`))
	f.Add(uint8(0), "latest", []byte(`{"server": {"name": "s", "imageRef": "cirros", "flavorRef": "1", "networks": "none", "min_count": "2"}}`))
	f.Add(uint8(0), "", []byte(`[`))

	f.Fuzz(func(t *testing.T, target uint8, version string, body []byte) {
		tg := fuzzTargets[int(target)%len(fuzzTargets)]
		rpc := &taskFake{fakeRPC: newFakeRPC(), actions: map[string][]*structs.InstanceAction{}}
		rpc.addHost(&structs.Host{ID: "h1", Name: "h1", AZ: "az1", Status: structs.HostStatusUp})
		rpc.addInstance(&structs.Instance{ID: fuzzServerID, Name: "web", ProjectID: "p-demo", UserID: "u-alice",
			FlavorID: "1", Flavor: rpc.flavors["1"], ImageID: "cirros", HostID: "h1", AZ: "az1",
			VMState: structs.VMStateActive, PowerState: structs.PowerRunning, Metadata: map[string]string{"role": "fe"},
			CreatedAt: 1, UpdatedAt: 2})
		log := &fuzzLog{}
		api := New(Config{RPC: rpc, Verifier: testTokens(), Logger: hclog.New(&hclog.LoggerOptions{Output: log, Level: hclog.Error})})
		r := httptest.NewRequest(tg.method, MountPath+"/v2.1"+tg.path, bytes.NewReader(body))
		r.Header.Set("X-Auth-Token", tg.token)
		r.Header.Set("Content-Type", "application/json")
		if version != "" {
			r.Header.Set("OpenStack-API-Version", "compute "+version)
		}
		w := httptest.NewRecorder()
		api.Handler().ServeHTTP(w, r)

		logged := log.String()
		if strings.Contains(logged, "panic") {
			t.Fatalf("%s %s %q: handler panicked: %s", tg.method, tg.path, body, logged)
		}
		if w.Code >= 500 && w.Code != http.StatusNotImplemented && !strings.Contains(logged, "fake rpc: unknown method") {
			t.Fatalf("%s %s %q: status %d: %s\n%s", tg.method, tg.path, body, w.Code, w.Body, logged)
		}
		if w.Code >= 400 {
			var fault map[string]map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &fault); err != nil || len(fault) != 1 {
				t.Fatalf("%s %s %q: status %d without a Nova fault body: %s", tg.method, tg.path, body, w.Code, w.Body)
			}
			for _, v := range fault {
				if v["code"] != float64(w.Code) {
					t.Fatalf("%s %s: fault %s does not carry code %d", tg.method, tg.path, w.Body, w.Code)
				}
				if _, ok := v["message"].(string); !ok {
					t.Fatalf("%s %s: fault %s has no message", tg.method, tg.path, w.Body)
				}
			}
		}
	})
}
