package agent

import (
	"net/http"
	"testing"
)

// TestVolumeRetype: os-retype changes a volume's type within its
// backend; the same type, an unknown one, one of another backend and a
// bad migration_policy get Cinder's refusals.
func TestVolumeRetype(t *testing.T) {
	t.Parallel()
	a, _ := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	base := "/volume/v3/" + projectOf(t, a, demo)
	for name, specs := range map[string]map[string]string{"gold": {}, "far": {"volume_backend_name": "elsewhere"}} {
		volumeCall(t, a, "POST", "/volume/v3/types", admin, "", map[string]any{"volume_type": map[string]any{"name": name, "extra_specs": specs}}).
			want(t, http.StatusOK)
	}
	id := createVolume(t, a, base, demo, map[string]any{"size": 1, "name": "r"})
	action := base + "/volumes/" + id + "/action"
	retype := func(params map[string]any) volumeResp {
		return volumeCall(t, a, "POST", action, demo, "", map[string]any{"os-retype": params})
	}
	retype(map[string]any{"new_type": "gold", "migration_policy": "never"}).want(t, http.StatusAccepted)
	vol := waitVolumeStatus(t, a, base, demo, id, "available")
	if vol["volume_type"] != "gold" {
		t.Fatalf("retyped volume %v", vol)
	}
	retype(map[string]any{"new_type": "gold"}).fault(t, http.StatusBadRequest, "badRequest",
		"Invalid volume: Retype needs volume to be in available or in-use state")
	retype(map[string]any{"new_type": "nope"}).fault(t, http.StatusNotFound, "itemNotFound", "Volume type with name nope could not be found.")
	retype(map[string]any{"new_type": "far", "migration_policy": "on-demand"}).fault(t, http.StatusBadRequest, "badRequest",
		"retyping it would migrate it, which is not supported")
	retype(map[string]any{"new_type": "__DEFAULT__", "migration_policy": "always"}).fault(t, http.StatusBadRequest, "badRequest",
		"'always' is not one of ['on-demand', 'never']")
	retype(map[string]any{"migration_policy": "never"}).fault(t, http.StatusBadRequest, "badRequest", "'new_type' is a required property")
	retype(map[string]any{"new_type": "__DEFAULT__", "migration_policy": nil}).want(t, http.StatusAccepted)
	if vol = waitVolumeStatus(t, a, base, demo, id, "available"); vol["volume_type"] != "__DEFAULT__" {
		t.Fatalf("volume retyped back %v", vol)
	}
}
