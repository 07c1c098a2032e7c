package nova

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestServerViewImagePropertiesAndSchedulerHints(t *testing.T) {
	h := newHarness(t)
	_, mine, _ := addHostAndServers(h)
	h.setInst(mine.ID, func(i *structs.Instance) {
		i.ImageProperties = map[string]string{"architecture": "x86_64", "hw_rescue_bus": "usb", "os_distro": "cirros",
			"owner_specified.openstack.md5": "x", "min_disk": "1", "kernel_id": "k"}
		i.Hints = &structs.SchedulerHints{SameHost: []string{"48e6a9f6-30af-47e0-bc04-acaed113bb4e"}}
	})
	path := "/compute/v2.1/servers/" + mine.ID
	for _, tc := range []struct{ version, file string }{
		{"2.98", "servers/v2.98/server-get-resp.json"},
		{"2.100", "servers/v2.100/server-get-resp.json"},
	} {
		r := h.req("GET", path, memberTok, tc.version, nil).expect(t, 200)
		want := sample(t, tc.file)
		delete(want["server"].(map[string]any), "security_groups")
		sameShape(t, tc.version+" show", r.body, want)
	}
	// 2.98: the image's standard properties only.
	r := h.req("GET", path, memberTok, "2.98", nil).expect(t, 200)
	props := r.obj("server", "image")["properties"]
	if want := map[string]any{"architecture": "x86_64", "hw_rescue_bus": "usb", "os_distro": "cirros"}; !reflect.DeepEqual(props, want) {
		t.Fatalf("properties %v", props)
	}
	if _, ok := r.obj("server")["scheduler_hints"]; ok {
		t.Fatal("scheduler_hints before 2.100")
	}
	if _, ok := h.req("GET", path, memberTok, "2.97", nil).obj("server", "image")["properties"]; ok {
		t.Fatal("image properties before 2.98")
	}
	// 2.100: every hint as a list, {} for none; in detail too.
	hints := h.req("GET", path, memberTok, "2.100", nil).obj("server")["scheduler_hints"]
	if want := map[string]any{"same_host": []any{"48e6a9f6-30af-47e0-bc04-acaed113bb4e"}}; !reflect.DeepEqual(hints, want) {
		t.Fatalf("hints %v", hints)
	}
	for _, s := range h.req("GET", "/compute/v2.1/servers/detail", adminTok, "2.100", nil).expect(t, 200).list("servers") {
		v := s.(map[string]any)
		if _, ok := v["scheduler_hints"].(map[string]any); !ok {
			t.Fatalf("detail without hints: %v", v)
		}
	}
	for _, s := range h.req("GET", "/compute/v2.1/servers", adminTok, "2.100", nil).expect(t, 200).list("servers") {
		if _, ok := s.(map[string]any)["scheduler_hints"]; ok {
			t.Fatal("the list has hints")
		}
	}
	if got := schedulerHintsView(&structs.SchedulerHints{Group: "g", DifferentHost: []string{"a", "b"}, Other: map[string][]string{"cidr": {"/24"}}}); !reflect.DeepEqual(got,
		map[string][]string{"group": {"g"}, "different_host": {"a", "b"}, "cidr": {"/24"}}) {
		t.Fatalf("hints view %v", got)
	}
}
