package metadata_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/agent/metadata"
	"github.com/stratus-cloud/stratus/structs"
)

// fuzzSource is an in-memory data source for the metadata service: one
// instance (fuzzInstanceID, project testProject) on host h-1 with a key
// pair, user data and one port 10.0.0.5 on a network and subnet.
type fuzzSource struct {
	mu       sync.Mutex
	password string
}

const (
	fuzzInstanceID = "0b6f8a9c-1d2e-4f50-8a6b-7c8d9e0f1a2b"
	fuzzAddr       = "10.0.0.5"
)

func (f *fuzzSource) instance() *structs.Instance {
	inst := &structs.Instance{ID: fuzzInstanceID, Name: "vm-1", ProjectID: testProject, UserID: testUser,
		HostID: "h-1", KeyName: "key-1", UserData: "I2Nsb3VkLWNvbmZpZwo=", FlavorID: "1",
		Flavor:   &structs.Flavor{ID: "1", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512, RootGB: 1},
		Metadata: map[string]string{"role": "web", "x": "y"}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.password != "" {
		inst.SetPassword(f.password)
	}
	return inst
}

func (f *fuzzSource) call(method string, args, reply any) error {
	switch method {
	case "Instance.Get":
		if args.(*structs.InstanceSpecificRequest).InstanceID != fuzzInstanceID {
			return structs.Errorf(structs.KindNotFound, "instance not found")
		}
		reply.(*structs.SingleInstanceResponse).Instance = f.instance()
	case "KeyPair.Get":
		reply.(*structs.SingleKeyPairResponse).KeyPair = &structs.KeyPair{Name: "key-1", UserID: testUser,
			PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuzz fuzz@test", Type: "ssh"}
	case "Host.Get":
		reply.(*structs.SingleHostResponse).Host = &structs.Host{ID: "h-1", AZ: "az-1"}
	case "Net.List":
		f.netList(args.(*structs.NetListRequest), reply.(*structs.NetListResponse))
	case "Instance.SetPassword":
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.password != "" {
			return structs.Errorf(structs.KindConflict, "password already set")
		}
		f.password = args.(*structs.InstancePasswordRequest).Password
	default:
		return fmt.Errorf("fuzz source: unexpected call %s", method)
	}
	return nil
}

func (f *fuzzSource) netList(args *structs.NetListRequest, out *structs.NetListResponse) {
	switch args.Kind {
	case structs.NetKindPort:
		out.Ports = []*structs.Port{{ID: "port-1", NetworkID: "net-1", DeviceID: fuzzInstanceID,
			DeviceOwner: structs.DeviceOwnerComputePrefix + "nova", MACAddress: "fa:16:3e:00:00:01",
			FixedIPs: []structs.FixedIP{{SubnetID: "sub-1", IPAddress: fuzzAddr}}, SecurityGroups: []string{"sg-1"}}}
	case structs.NetKindNetwork:
		out.Networks = []*structs.Network{{ID: "net-1", Name: "private", ProjectID: testProject}}
	case structs.NetKindSubnet:
		out.Subnets = []*structs.Subnet{{ID: "sub-1", NetworkID: "net-1", IPVersion: 4, CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.1"}}
	case structs.NetKindSecurityGroup:
		out.SecurityGroups = []*structs.SecurityGroup{{ID: "sg-1", Name: "default"}}
	case structs.NetKindFloatingIP:
		out.FloatingIPs = []*structs.FloatingIP{{ID: "fip-1", PortID: "port-1", FixedIPAddress: fuzzAddr, FloatingIPAddress: "192.0.2.10"}}
	}
}

// FuzzServe sends arbitrary requests (raw HTTP: any method, path and
// headers, the proxy's signed headers among them) to the metadata
// service from the instance's address or another one, with a fake data
// source behind it. It must never panic nor answer a 5xx (the data
// source does not fail), and every refusal is webob's plain-text error
// page. Seeds in testdata/fuzz/FuzzServe; run longer with
// go test -run '^$' -fuzz FuzzServe -fuzztime 5m ./agent/metadata.
func FuzzServe(f *testing.F) {
	sig := metadata.Sign(testSecret, fuzzInstanceID)
	for _, p := range []string{"/", "/latest/meta-data/", "/2009-04-04/meta-data/public-keys/0/openssh-key",
		"/latest/user-data", "/openstack", "/openstack/latest/meta_data.json", "/openstack/2013-04-04/password",
		"/openstack/latest/network_data.json", "/openstack/2012-08-10/user_data", "/openstack/latest/vendor_data2.json"} {
		f.Add([]byte("GET "+p+" HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"), true)
	}
	f.Add([]byte("GET /openstack/latest/meta_data.json HTTP/1.1\r\nHost: x\r\nX-Instance-ID: "+fuzzInstanceID+
		"\r\nX-Instance-ID-Signature: "+sig+"\r\nX-Tenant-ID: "+testProject+"\r\nX-Forwarded-For: 10.0.0.5\r\n\r\n"), false)
	f.Add([]byte("POST /openstack/latest/password HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nsecret"), true)
	f.Add([]byte("DELETE /latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n"), true)

	f.Fuzz(func(t *testing.T, raw []byte, fromInstance bool) {
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return
		}
		r.RemoteAddr = "192.0.2.99:41000"
		if fromInstance {
			r.RemoteAddr = fuzzAddr + ":41000"
		}
		src := &fuzzSource{}
		svc := metadata.New(metadata.Config{Call: src.call, HostIDs: func() []string { return []string{"h-1"} },
			SharedSecret: testSecret, CacheTTL: -1})
		w := httptest.NewRecorder()
		svc.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", r.Method, r.URL.Path, w.Code, w.Body)
		}
		if w.Code >= 400 {
			body := w.Body.String()
			prefix := fmt.Sprintf("%d %s\n\n", w.Code, http.StatusText(w.Code))
			if !strings.HasPrefix(body, prefix) || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
				t.Fatalf("%s %q: status %d without webob's error page: %q", r.Method, r.URL.Path, w.Code, body)
			}
		}
	})
}
