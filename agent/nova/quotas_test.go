package nova

import (
	"fmt"
	"strings"
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

// Nova's update takes the quotas it no longer enforces with Neutron
// (network ones, until 2.35; file injection ones, until 2.56), keeps
// them and shows them back; the detail hides them from 2.36 and 2.57.
func TestQuotaSetIgnoredFieldsAndDetailVersions(t *testing.T) {
	h := newHarness(t)
	ignored := map[string]any{"fixed_ips": 3, "floating_ips": "4", "security_groups": 5, "security_group_rules": 6,
		"injected_files": 7, "injected_file_content_bytes": 8, "injected_file_path_bytes": 9}
	r := h.req("PUT", quotaPath, adminTok, "2.35", map[string]any{"quota_set": ignored}).expect(t, 200)
	for k, v := range ignored {
		if got := r.obj("quota_set")[k]; fmt.Sprint(got) != fmt.Sprint(v) {
			t.Fatalf("%s = %v, want %v", k, got, v)
		}
	}
	hidden := map[string]int{"fixed_ips": 36, "floating_ips": 36, "security_groups": 36, "security_group_rules": 36,
		"injected_files": 57, "injected_file_content_bytes": 57, "injected_file_path_bytes": 57}
	for _, version := range []int{35, 36, 56, 57} {
		v := fmt.Sprintf("2.%d", version)
		d := h.req("GET", quotaPath+"/detail", memberTok, v, nil).expect(t, 200).obj("quota_set")
		if d["fixed_ips"] != nil && d["fixed_ips"].(map[string]any)["limit"] != 3.0 {
			t.Fatalf("%s fixed_ips %v", v, d["fixed_ips"])
		}
		for k, from := range hidden {
			if _, ok := d[k]; ok != (version < from) {
				t.Fatalf("%s detail shows %s: %v", v, k, ok)
			}
		}
		for _, k := range []string{"cores", "instances", "ram", "key_pairs", "metadata_items", "server_groups", "server_group_members"} {
			if _, ok := d[k].(map[string]any); !ok {
				t.Fatalf("%s detail lacks %s", v, k)
			}
		}
	}
	sameShape(t, "2.57 detail", h.req("GET", quotaPath+"/detail", memberTok, "2.57", nil).body,
		sample(t, "os-quota-sets/v2.57/quotas-show-detail-get-resp.json"))
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
	h.req("PUT", path, adminTok, "2.57", map[string]any{"quota_class_set": map[string]any{"injected_files": 1}}).
		fault(t, 400, "badRequest", "Additional properties are not allowed")
	// Before 2.50 the server group quotas are taken, stored, not shown.
	r := h.req("PUT", "/compute/v2.1/os-quota-class-sets/gold", adminTok, "2.1",
		map[string]any{"quota_class_set": map[string]any{"server_groups": 4, "fixed_ips": 9, "injected_files": 2}}).expect(t, 200)
	if set := r.obj("quota_class_set"); set["server_groups"] != nil || set["fixed_ips"] != 9.0 || set["injected_files"] != 2.0 {
		t.Fatalf("2.1 class update %v", set)
	}
	if set := h.req("GET", "/compute/v2.1/os-quota-class-sets/gold", adminTok, "2.50", nil).obj("quota_class_set"); set["server_groups"] != 4.0 ||
		set["fixed_ips"] != nil || set["injected_files"] != 2.0 {
		t.Fatalf("2.50 class %v", set)
	}
	long := strings.Repeat("é", 256)
	h.req("PUT", "/compute/v2.1/os-quota-class-sets/"+long, adminTok, "", map[string]any{"quota_class_set": map[string]any{"instances": 1}}).
		fault(t, 400, "badRequest", "Invalid input received: quota_class_name has 256 characters, more than 255.")
	// The default class is every project's defaults.
	h.req("PUT", path, adminTok, "2.57", map[string]any{"quota_class_set": map[string]any{"instances": 7, "server_groups": 3}}).expect(t, 200)
	for _, p := range []string{quotaPath + "/defaults", quotaPath} {
		if set := h.req("GET", p, memberTok, "2.57", nil).obj("quota_set"); set["instances"] != 7.0 || set["server_groups"] != 3.0 || set["cores"] != 50.0 {
			t.Fatalf("%s %v", p, set)
		}
	}
	r = h.req("GET", quotaPath+"/defaults", memberTok, "2.57", nil).expect(t, 200)
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
