package instancedata

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestFilesLayOutEveryVersion checks a config drive's tree: every
// OpenStack version and latest with meta_data.json, user_data only when
// the instance has some, no password, and the EC2 versions Nova keeps.
func TestFilesLayOutEveryVersion(t *testing.T) {
	d := &InstanceData{
		Instance: &structs.Instance{ID: "6f1c3c1e-8d6e-4e0c-9d7e-3b8f3a2f9b10", Name: "web-1", UserData: "#!/bin/sh\necho hi\n"},
		Networks: map[string]*structs.Network{}, Subnets: map[string]*structs.Subnet{}, FloatingIPs: map[string]string{},
	}
	files, err := d.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(append([]string(nil), OpenStackVersions...), "latest") {
		md, ok := files["openstack/"+v+"/meta_data.json"]
		if !ok {
			t.Fatalf("no meta_data.json for %s in %v", v, keys(files))
		}
		var got map[string]any
		if err := json.Unmarshal(md, &got); err != nil || got["uuid"] != d.Instance.ID {
			t.Fatalf("%s meta_data.json = %s (%v)", v, md, err)
		}
		if string(files["openstack/"+v+"/user_data"]) != d.Instance.UserData {
			t.Fatalf("%s user_data = %q", v, files["openstack/"+v+"/user_data"])
		}
		if _, ok := files["openstack/"+v+"/"+PasswordFile]; ok {
			t.Fatalf("a config drive holds the password file of %s", v)
		}
	}
	for _, v := range []string{"2009-04-04", "latest"} {
		if _, ok := files["ec2/"+v+"/meta-data.json"]; !ok {
			t.Fatalf("no ec2 %s meta-data.json in %v", v, keys(files))
		}
	}
	if _, ok := files["ec2/1.0/meta-data.json"]; ok {
		t.Fatal("a config drive holds an EC2 version Nova skips")
	}

	d.Instance.UserData = ""
	files, err = d.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if strings.HasSuffix(name, "/user_data") || strings.HasSuffix(name, "/user-data") {
			t.Fatalf("%s written for an instance without user data", name)
		}
	}
}

// TestAnswersByVersion checks the lookups the metadata service makes:
// unknown versions and paths are not found, latest resolves, and the
// password file exists from grizzly on.
func TestAnswersByVersion(t *testing.T) {
	d := &InstanceData{Instance: &structs.Instance{ID: "6f1c3c1e-8d6e-4e0c-9d7e-3b8f3a2f9b10", Name: "web-1"},
		Networks: map[string]*structs.Network{}, Subnets: map[string]*structs.Subnet{}, FloatingIPs: map[string]string{}}
	if got, ok := d.EC2("latest", []string{"meta-data", "instance-id"}); !ok || got != "i-6f1c3c1e" {
		t.Fatalf("latest instance-id = %q, %v", got, ok)
	}
	if _, ok := d.EC2("2001-01-01", []string{"meta-data"}); ok {
		t.Fatal("an unknown EC2 version answered")
	}
	if _, ok := d.EC2("latest", []string{"meta-data", "nothing"}); ok {
		t.Fatal("an unknown EC2 path answered")
	}
	if _, ok := d.OpenStackListing("2001-01-01"); ok {
		t.Fatal("an unknown OpenStack version listed files")
	}
	if HasPassword("2012-08-10") || !HasPassword("2013-04-04") || !HasPassword("latest") || HasPassword("bogus") {
		t.Fatal("password file versions wrong")
	}
	if _, ok, _ := d.OpenStackFile("latest", PasswordFile); ok {
		t.Fatal("the password came from the content, not the service")
	}
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
