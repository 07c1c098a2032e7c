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
