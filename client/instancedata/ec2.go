package instancedata

import (
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// EC2Versions are the versions of the EC2 format Nova serves, oldest
// first; "latest" is the last.
var EC2Versions = []string{"1.0", "2007-01-19", "2007-03-01", "2007-08-29", "2007-10-10", "2007-12-15",
	"2008-02-01", "2008-09-01", "2009-04-04"}

// ec2Version resolves "latest" and checks a version.
func ec2Version(v string) (string, bool) {
	if v == "latest" {
		return EC2Versions[len(EC2Versions)-1], true
	}
	return v, slices.Contains(EC2Versions, v)
}

// named is a directory of the EC2 tree that lists itself by a name of
// its own in its parent (public-keys/ lists "0=keyname").
type named struct {
	name string
	tree map[string]any
}

// ec2ID is an EC2-style id ("i-0a1b2c3d") derived from a UUID, as
// Nova's ec2 id mappings give one.
func ec2ID(prefix, uuid string) string {
	hex := strings.ReplaceAll(uuid, "-", "")
	if len(hex) >= 8 {
		if n, err := strconv.ParseUint(hex[:8], 16, 32); err == nil {
			return fmt.Sprintf("%s-%08x", prefix, n)
		}
	}
	// Not a UUID (an image named by a name): a stable hash of it.
	return fmt.Sprintf("%s-%08x", prefix, crc32.ChecksumIEEE([]byte(uuid)))
}

// ec2Tree is the EC2 metadata of version v (resolved): {"meta-data":
// {…}, "user-data": …}, with the keys Nova's get_ec2_metadata gives it.
func (d *InstanceData) ec2Tree(v string) map[string]any {
	inst := d.Instance
	hostname := d.Hostname()
	fixed := d.FixedIPs()
	localIP := ""
	if len(fixed) > 0 {
		localIP = fixed[0]
	}
	md := map[string]any{
		"ami-id":            ec2ID("ami", inst.ImageID),
		"ami-launch-index":  "0",
		"ami-manifest-path": "FIXME",
		"instance-id":       ec2ID("i", inst.ID),
		"hostname":          hostname,
		"local-ipv4":        localIP,
		"reservation-id":    inst.ReservationID,
		"security-groups":   strings.Join(d.SecurityGroups, "\n"),
	}
	if kp := d.KeyPair; kp != nil {
		md["public-keys"] = map[string]any{"0": named{name: "0=" + kp.Name, tree: map[string]any{"openssh-key": kp.PublicKey}}}
	}
	if v >= "2007-01-19" {
		md["local-hostname"] = hostname
		md["public-hostname"] = hostname
		md["public-ipv4"] = d.FloatingIPs[localIP]
	}
	if v >= "2007-08-29" && inst.Flavor != nil {
		md["instance-type"] = inst.Flavor.Name
	}
	if v >= "2007-12-15" {
		md["block-device-mapping"] = d.blockDeviceMapping()
	}
	if v >= "2008-02-01" {
		md["placement"] = map[string]any{"availability-zone": d.AZ}
	}
	if v >= "2008-09-01" {
		md["instance-action"] = "none"
	}
	tree := map[string]any{"meta-data": md}
	if inst.UserData != "" {
		tree["user-data"] = inst.UserData
	}
	return tree
}

// blockDeviceMapping is the root disk and the flavor's ephemeral and
// swap disks, named as the libvirt driver attaches them.
func (d *InstanceData) blockDeviceMapping() map[string]any {
	m := map[string]any{"ami": "vda", "root": "/dev/vda"}
	next := 'b'
	if f := d.Instance.Flavor; f != nil {
		if f.EphemeralGB > 0 {
			m["ephemeral0"] = "vd" + string(next)
			next++
		}
		if f.SwapMB > 0 {
			m["swap"] = "vd" + string(next)
		}
	}
	return m
}

// lookupTree walks path in an EC2 tree: a directory answers its listing,
// a value itself; ok is false for a path not in the tree.
func lookupTree(tree map[string]any, path []string) (string, bool) {
	var node any = tree
	for _, seg := range path {
		if n, isNamed := node.(named); isNamed {
			node = n.tree
		}
		dir, isDir := node.(map[string]any)
		if !isDir {
			return "", false
		}
		child, found := dir[seg]
		if !found {
			return "", false
		}
		node = child
	}
	return render(node), true
}

// render prints a node as Nova's ec2_md_print does: a directory lists
// its keys sorted, subdirectories with a trailing slash (or their own
// name), one a line.
func render(node any) string {
	switch n := node.(type) {
	case named:
		return render(n.tree)
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		lines := make([]string, 0, len(keys))
		for _, k := range keys {
			switch c := n[k].(type) {
			case named:
				lines = append(lines, c.name)
			case map[string]any:
				lines = append(lines, k+"/")
			default:
				lines = append(lines, k)
			}
		}
		return strings.Join(lines, "\n")
	case string:
		return n
	default:
		return fmt.Sprint(n)
	}
}

// toJSON converts an EC2 tree to plain maps, for a config drive's
// ec2/<version>/meta-data.json (a named directory becomes its tree).
func toJSON(node any) any {
	switch n := node.(type) {
	case named:
		return toJSON(n.tree)
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, v := range n {
			out[k] = toJSON(v)
		}
		return out
	}
	return node
}
