package agent

import (
	"fmt"
	"os"
	"testing"

	"github.com/stratus-cloud/stratus/agent/native"
	"github.com/stratus-cloud/stratus/structs"
)

// The native API's bodies, as the full-agent tests decode them.
type (
	httpError          = native.ErrorBody
	instanceJSON       = native.Instance
	hostJSON           = native.Host
	clusterStatusJSON  = native.ClusterStatus
	watchInstancesJSON = native.InstanceWatch
	bootstrapJSON      = native.Bootstrap
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitDevImages waits until dev mode's seeded images are active, for
// tests that do not wait for the dev flavors (which dev mode seeds only
// after the image is active).
func waitDevImages(t *testing.T, a *Agent) {
	t.Helper()
	waitLong(t, "the dev images active", func() error {
		var out structs.SingleImageResponse
		if err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devImageID}, &out); err != nil {
			return err
		}
		if out.Image == nil || out.Image.Status != structs.ImageActive {
			return fmt.Errorf("cirros is %+v", out.Image)
		}
		return nil
	})
}

// bootActive creates the instance req asks for and waits until it is
// ACTIVE with no task running and where (when given) accepts it; an
// instance in ERROR fails the test at once.
func bootActive(t *testing.T, a *Agent, req *structs.InstanceCreateRequest, where func(*structs.Instance) error) *structs.Instance {
	t.Helper()
	var out structs.InstanceCreateResponse
	if err := a.rpc.RPC("Instance.Create", req, &out); err != nil {
		t.Fatalf("create %s: %v", req.Name, err)
	}
	id := out.Instances[0].ID
	var inst *structs.Instance
	waitLong(t, req.Name+" ACTIVE", func() error {
		var r structs.SingleInstanceResponse
		if err := a.rpc.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &r); err != nil {
			return err
		}
		inst = r.Instance
		if inst.Status() == "ERROR" {
			t.Fatalf("%s in ERROR: %+v", req.Name, inst.Fault)
		}
		if inst.Status() != "ACTIVE" || inst.TaskState != "" {
			return fmt.Errorf("status %s task %q on %q", inst.Status(), inst.TaskState, inst.HostID)
		}
		if where != nil {
			return where(inst)
		}
		return nil
	})
	return inst
}
