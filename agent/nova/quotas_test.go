package nova

import (
	"testing"
)

const quotaPath = "/compute/v2.1/os-quota-sets/p-demo"

func TestQuotaSetUpdateAndDelete(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h) // one m1.tiny server in p-demo
	for _, tc := range []struct{ version, req, resp string }{
		{"2.1", "os-quota-sets/quotas-update-post-req.json", "os-quota-sets/quotas-update-post-resp.json"},
		{"2.36", "os-quota-sets/quotas-update-post-req.json", "os-quota-sets/v2.36/quotas-update-post-resp.json"},
		{"2.57", "os-quota-sets/v2.57/quotas-update-post-req.json", "os-quota-sets/v2.57/quotas-update-post-resp.json"},
		{"2.1", "os-quota-sets/quotas-update-force-post-req.json", "os-quota-sets/quotas-update-force-post-resp.json"},
	} {
		r := h.req("PUT", quotaPath, adminTok, tc.version, sample(t, tc.req)).expect(t, 200)
		sameShape(t, tc.version+" "+tc.req, r.body, sample(t, tc.resp))
	}
	show := h.req("GET", quotaPath, memberTok, "", nil).obj("quota_set")
	if show["instances"] != 45.0 || show["cores"] != 45.0 || show["id"] != "p-demo" {
		t.Fatalf("after updates %v", show)
	}
	// Limits and the detail follow.
	abs := h.req("GET", "/compute/v2.1/limits", memberTok, "", nil).obj("limits", "absolute")
	if abs["maxTotalInstances"] != 45.0 || abs["maxTotalCores"] != 45.0 || abs["totalInstancesUsed"] != 1.0 {
		t.Fatalf("limits %v", abs)
	}
	h.req("PUT", quotaPath, adminTok, "", map[string]any{"quota_set": map[string]any{"metadata_items": 64}}).expect(t, 200)
	if abs = h.req("GET", "/compute/v2.1/limits", memberTok, "2.1", nil).obj("limits", "absolute"); abs["maxImageMeta"] != 64.0 || abs["maxServerMeta"] != 64.0 {
		t.Fatalf("metadata limits %v", abs)
	}

	for _, tc := range []struct {
		version string
		body    any
		status  int
		msg     string
	}{
		{"2.1", map[string]any{"quota_set": map[string]any{"instances": 0}}, 400,
			"Quota limit 0 for instances must be greater than or equal to already used and reserved 1."},
		{"2.1", map[string]any{"quota_set": map[string]any{"instances": -2}}, 400, "less than the minimum of -1"},
		{"2.1", map[string]any{"quota_set": map[string]any{"instances": "ten"}}, 400, "does not match"},
		{"2.1", map[string]any{"quota_set": map[string]any{"gpus": 1}}, 400, "Additional properties are not allowed"},
		{"2.36", map[string]any{"quota_set": map[string]any{"floating_ips": 1}}, 400, "Additional properties are not allowed"},
		{"2.57", map[string]any{"quota_set": map[string]any{"injected_files": 1}}, 400, "Additional properties are not allowed"},
		{"2.1", map[string]any{"quota_set": map[string]any{"force": "maybe"}}, 400, "is not one of"},
		{"2.1", map[string]any{}, 400, "'quota_set' is a required property"},
	} {
		h.req("PUT", quotaPath, adminTok, tc.version, tc.body).fault(t, tc.status, faultNames[tc.status], tc.msg)
	}
	// Force and unlimited pass whatever the usage.
	h.req("PUT", quotaPath, adminTok, "", map[string]any{"quota_set": map[string]any{"instances": 0, "force": "True"}}).expect(t, 200)
	h.req("PUT", quotaPath, adminTok, "", map[string]any{"quota_set": map[string]any{"instances": -1, "cores": "-1"}}).expect(t, 200)
	if show = h.req("GET", quotaPath, memberTok, "", nil).obj("quota_set"); show["instances"] != -1.0 || show["cores"] != -1.0 {
		t.Fatalf("unlimited %v", show)
	}

	// Members cannot change quotas, a project's or a user's
	// (issue7b_test.go drives per-user quotas).
	h.req("PUT", quotaPath, memberTok, "", map[string]any{"quota_set": map[string]any{"instances": 5}}).
		fault(t, 403, "forbidden", "os_compute_api:os-quota-sets:update")
	h.req("DELETE", quotaPath, memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-quota-sets:delete")
	h.req("PUT", quotaPath+"?user_id=u-alice", memberTok, "", map[string]any{"quota_set": map[string]any{"instances": 5}}).
		fault(t, 403, "forbidden", "os_compute_api:os-quota-sets:update")

	// Delete: back to the defaults (202).
	r := h.req("DELETE", quotaPath, adminTok, "", nil).expect(t, 202)
	if len(r.raw) != 0 {
		t.Fatalf("delete body %s", r.raw)
	}
	if show = h.req("GET", quotaPath, memberTok, "", nil).obj("quota_set"); show["instances"] != 10.0 || show["metadata_items"] != 128.0 {
		t.Fatalf("after delete %v", show)
	}
	// An admin reads and writes any project's; a member only its own.
	h.req("PUT", "/compute/v2.1/os-quota-sets/p-other", adminTok, "", map[string]any{"quota_set": map[string]any{"ram": 1024}}).expect(t, 200)
	if d := h.req("GET", "/compute/v2.1/os-quota-sets/p-other/detail", adminTok, "", nil).obj("quota_set"); d["ram"].(map[string]any)["limit"] != 1024.0 {
		t.Fatalf("p-other %v", d)
	}
	h.req("GET", "/compute/v2.1/os-quota-sets/p-other/detail", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:os-quota-sets:detail")
}

func TestQuotaClassSets(t *testing.T) {
	h := newHarness(t)
	const path = "/compute/v2.1/os-quota-class-sets/default"
	h.req("GET", path, memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-quota-class-sets:show")
	h.req("PUT", path, memberTok, "", map[string]any{"quota_class_set": map[string]any{"instances": 5}}).
		fault(t, 403, "forbidden", "os_compute_api:os-quota-class-sets:update")
	for _, tc := range []struct{ version, dir string }{{"2.1", ""}, {"2.50", "v2.50/"}, {"2.57", "v2.57/"}} {
		p := "os-quota-class-sets/" + tc.dir
		r := h.req("GET", path, adminTok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+" show", r.body, sample(t, p+"quota-classes-show-get-resp.json"))
		r = h.req("PUT", path, adminTok, tc.version, sample(t, p+"quota-classes-update-post-req.json")).expect(t, 200)
		sameShape(t, tc.version+" update", r.body, sample(t, p+"quota-classes-update-post-resp.json"))
	}
	h.req("PUT", path, adminTok, "2.50", map[string]any{"quota_class_set": map[string]any{"floating_ips": 1}}).
		fault(t, 400, "badRequest", "Additional properties are not allowed")
	h.req("PUT", path, adminTok, "2.1", map[string]any{"quota_class_set": map[string]any{"server_groups": 1}}).
		fault(t, 400, "badRequest", "Additional properties are not allowed")
	// The default class is every project's defaults.
	h.req("PUT", path, adminTok, "2.57", map[string]any{"quota_class_set": map[string]any{"instances": 7, "server_groups": 3}}).expect(t, 200)
	for _, p := range []string{quotaPath + "/defaults", quotaPath} {
		if set := h.req("GET", p, memberTok, "2.57", nil).obj("quota_set"); set["instances"] != 7.0 || set["server_groups"] != 3.0 || set["cores"] != 50.0 {
			t.Fatalf("%s %v", p, set)
		}
	}
	r := h.req("GET", quotaPath+"/defaults", memberTok, "2.57", nil).expect(t, 200)
	sameShape(t, "defaults", r.body, sample(t, "os-quota-sets/v2.57/quotas-show-defaults-get-resp.json"))
	// A project's own limit wins over the class.
	h.req("PUT", quotaPath, adminTok, "", map[string]any{"quota_set": map[string]any{"instances": 20}}).expect(t, 200)
	if set := h.req("GET", quotaPath, memberTok, "", nil).obj("quota_set"); set["instances"] != 20.0 || set["server_groups"] != 3.0 {
		t.Fatalf("project over class %v", set)
	}
}

func TestLimitsCountServerGroups(t *testing.T) {
	h := newHarness(t)
	createGroup(t, h, memberTok, "", map[string]any{"server_group": map[string]any{"name": "g", "policies": []any{"affinity"}}})
	abs := h.req("GET", "/compute/v2.1/limits", memberTok, "2.57", nil).obj("limits", "absolute")
	if abs["totalServerGroupsUsed"] != 1.0 || abs["maxServerGroups"] != 10.0 || abs["maxServerGroupMembers"] != 10.0 {
		t.Fatalf("absolute %v", abs)
	}
	d := h.req("GET", quotaPath+"/detail", memberTok, "", nil).obj("quota_set")
	if sg := d["server_groups"].(map[string]any); sg["in_use"] != 1.0 || sg["limit"] != 10.0 || sg["reserved"] != 0.0 {
		t.Fatalf("detail %v", sg)
	}
}
