package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestDevFlavorsAppearOnlyWithTheDevImage checks dev mode's seeding
// order: from the moment its flavors can be seen, the image cirros is
// active, so that a boot of "cirros" right after start resolves to the
// image (and its data) instead of passing the image check by name while
// no image exists; a name no image has is refused.
func TestDevFlavorsAppearOnlyWithTheDevImage(t *testing.T) {
	t.Parallel()
	a := startDevAgent(t, nil)
	waitFor(t, "the dev flavors", func() error {
		var list structs.FlavorListResponse
		if err := a.self.RPC("Flavor.List", &structs.FlavorListRequest{}, &list); err != nil {
			return err
		}
		if len(list.Flavors) == 0 {
			return errors.New("no flavors yet")
		}
		return nil
	})
	// No waiting from here on: the flavors imply the image.
	var img structs.SingleImageResponse
	if err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devImageID}, &img); err != nil {
		t.Fatalf("the flavors are seeded but the dev image is not: %v", err)
	}
	if img.Image == nil || img.Image.Status != structs.ImageActive {
		t.Fatalf("the flavors are seeded but the dev image is %+v", img.Image)
	}
	var created structs.InstanceCreateResponse
	err := a.self.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "first", FlavorID: "m1.tiny", ImageID: "cirros", Count: 1}, &created)
	if err != nil {
		t.Fatalf("boot cirros: %v", err)
	}
	if len(created.Instances) != 1 || created.Instances[0].ImageID != devImageID {
		t.Fatalf("a boot of cirros made %+v, want one instance of image %s", created.Instances, devImageID)
	}
	err = a.self.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "bad", FlavorID: "m1.tiny", ImageID: "no-such-image", Count: 1},
		&structs.InstanceCreateResponse{})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "Image no-such-image could not be found.") {
		t.Fatalf("a boot of an unknown image: got %v, want Nova's \"Image no-such-image could not be found.\"", err)
	}
}
