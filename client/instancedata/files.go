package instancedata

import (
	"encoding/json"
	"fmt"
)

// configDriveEC2Versions are the EC2 versions a config drive carries:
// Nova's config_drive_skip_versions leave out all but the newest.
var configDriveEC2Versions = []string{"2009-04-04", "latest"}

// Files is the content of the instance's config drive, path → data, as
// Nova's metadata_for_config_drive lays it out: ec2/<version>/
// meta-data.json and user-data, and openstack/<version>/meta_data.json,
// user_data, vendor_data.json, network_data.json and vendor_data2.json
// for every OpenStack version and latest (no password: a guest posts it
// to the metadata service).
func (d *InstanceData) Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range configDriveEC2Versions {
		v, _ := ec2Version(name)
		tree := d.ec2Tree(v)
		if ud, ok := tree["user-data"].(string); ok {
			out["ec2/"+name+"/user-data"] = []byte(ud)
		}
		b, err := json.Marshal(toJSON(tree["meta-data"]))
		if err != nil {
			return nil, fmt.Errorf("encode ec2 meta-data: %w", err)
		}
		out["ec2/"+name+"/meta-data.json"] = b
	}
	for _, name := range append(append([]string(nil), OpenStackVersions...), "latest") {
		v, _ := openStackVersion(name)
		for _, file := range d.openStackListing(v) {
			b, ok, err := d.openStackFile(v, file)
			if err != nil {
				return nil, err
			}
			if ok {
				out["openstack/"+name+"/"+file] = b
			}
		}
	}
	return out, nil
}
