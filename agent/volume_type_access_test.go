package agent

import (
	"net/http"
	"strings"
	"testing"
)

// TestVolumeTypeAccess: a private type is invisible and unusable to a
// project until an admin gives it access (os-volume-type-access), with
// Cinder's answers for repeated, missing and public-type changes.
func TestVolumeTypeAccess(t *testing.T) {
	t.Parallel()
	a, _ := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	project := projectOf(t, a, demo)
	base := "/volume/v3/" + project
	r := volumeCall(t, a, "POST", "/volume/v3/types", admin, "", map[string]any{"volume_type": map[string]any{
		"name": "secret", "os-volume-type-access:is_public": false}}).want(t, http.StatusOK)
	typeID := r.body["volume_type"].(map[string]any)["id"].(string)
	access := "/volume/v3/types/" + typeID + "/os-volume-type-access"
	grant := func(token, action, project string) volumeResp {
		return volumeCall(t, a, "POST", "/volume/v3/types/"+typeID+"/action", token, "", map[string]any{action: map[string]any{"project": project}})
	}
	seen := func() bool {
		r := volumeCall(t, a, "GET", base+"/types", demo, "", nil).want(t, http.StatusOK)
		return strings.Contains(r.raw, `"secret"`)
	}

	if seen() {
		t.Fatal("a private type is listed for a project without access")
	}
	volumeCall(t, a, "GET", base+"/types/"+typeID, demo, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "could not be found")
	volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1, "volume_type": "secret"}}).
		fault(t, http.StatusNotFound, "itemNotFound", "Volume type secret could not be found.")
	vol := createVolume(t, a, base, demo, map[string]any{"size": 1})
	volumeCall(t, a, "POST", base+"/volumes/"+vol+"/action", demo, "", map[string]any{"os-retype": map[string]any{"new_type": "secret"}}).
		fault(t, http.StatusNotFound, "itemNotFound", "Volume type secret could not be found.")

	grant(demo, "addProjectAccess", project).want(t, http.StatusForbidden)
	volumeCall(t, a, "GET", access, demo, "", nil).want(t, http.StatusForbidden)
	if r := volumeCall(t, a, "GET", access, admin, "", nil).want(t, http.StatusOK); r.raw != `{"volume_type_access":[]}` {
		t.Fatalf("empty access list %s", r.raw)
	}
	grant(admin, "addProjectAccess", project).want(t, http.StatusAccepted)
	grant(admin, "addProjectAccess", project).fault(t, http.StatusConflict, "conflictingRequest",
		"Volume type access for "+typeID+" / "+project+" combination already exists.")
	if r := volumeCall(t, a, "GET", access, admin, "", nil).want(t, http.StatusOK); r.raw != `{"volume_type_access":[{"project_id":"`+project+`","volume_type_id":"`+typeID+`"}]}` {
		t.Fatalf("access list %s", r.raw)
	}
	if !seen() {
		t.Fatal("a private type is not listed for a project with access")
	}
	r = volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1, "volume_type": "secret"}}).want(t, http.StatusAccepted)
	if r.body["volume"].(map[string]any)["volume_type"] != "secret" {
		t.Fatalf("volume of a private type %s", r.raw)
	}

	grant(admin, "removeProjectAccess", project).want(t, http.StatusAccepted)
	grant(admin, "removeProjectAccess", project).fault(t, http.StatusNotFound, "itemNotFound",
		"Volume type access not found for "+typeID+" / "+project+" combination.")
	grant(admin, "addProjectAccess", "").fault(t, http.StatusBadRequest, "badRequest", "is too short")
	if seen() {
		t.Fatal("a private type is still listed after its access was removed")
	}
	volumeCall(t, a, "GET", "/volume/v3/types/"+"00000000-0000-4000-8000-00000000d0f7"+"/os-volume-type-access", admin, "", nil).
		fault(t, http.StatusNotFound, "itemNotFound", "Access list not available for public volume types.")
	volumeCall(t, a, "POST", "/volume/v3/types/00000000-0000-4000-8000-00000000d0f7/action", admin, "", map[string]any{"addProjectAccess": map[string]any{"project": project}}).
		fault(t, http.StatusBadRequest, "badRequest", "Type access modification is not applicable to public volume type.")
}
