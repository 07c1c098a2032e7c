package ec2

import (
	"encoding/xml"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// terminatedVisible is how long a terminated instance stays listed, as
// EC2 shows one for about an hour.
const terminatedVisible = time.Hour

// instancesOf lists the caller's project's instances: the live ones and
// those terminated within terminatedVisible, from their usage records
// (Instance.Usage, bound to the token's project by the servers too),
// oldest first.
func (q *request) instancesOf() ([]*structs.Instance, error) {
	var out structs.InstanceUsageResponse
	if err := q.call("Instance.Usage", &structs.InstanceUsageRequest{ProjectID: q.caller.ProjectID}, &out); err != nil {
		return nil, err
	}
	insts := out.Instances
	since := q.api.now().Add(-terminatedVisible).UnixNano()
	for _, u := range out.Deleted {
		if u.DeletedAt >= since {
			insts = append(insts, terminatedInstance(u))
		}
	}
	sort.Slice(insts, func(i, j int) bool {
		if insts[i].CreatedAt != insts[j].CreatedAt {
			return insts[i].CreatedAt < insts[j].CreatedAt
		}
		return insts[i].ID < insts[j].ID
	})
	return insts, nil
}

// terminatedInstance is what a deleted instance's usage record tells of
// it: its id, name, flavor and times; its image, key and tags are gone
// with it.
func terminatedInstance(u *structs.InstanceUsage) *structs.Instance {
	return &structs.Instance{ID: u.InstanceID, Name: u.Name, ProjectID: u.ProjectID, UserID: u.UserID,
		FlavorID: u.FlavorName, VMState: structs.VMStateDeleted, CreatedAt: u.CreatedAt, TerminatedAt: u.DeletedAt}
}

// resolveInstances maps EC2 instance ids to the caller's instances, in
// the order given. A malformed id is InvalidInstanceID.Malformed; an id
// matching none of the project's instances (another project's included)
// is InvalidInstanceID.NotFound, naming every such id as EC2 does.
func (q *request) resolveInstances(ids []string) ([]*structs.Instance, error) {
	for _, id := range ids {
		if !validID("i", id) {
			return nil, ec2Error(codeInvalidInstanceID, "Invalid id: \"%s\"", id)
		}
	}
	all, err := q.instancesOf()
	if err != nil {
		return nil, err
	}
	out := make([]*structs.Instance, 0, len(ids))
	var missing []string
	for _, id := range ids {
		var found *structs.Instance
		for _, inst := range all {
			if strings.HasPrefix(instanceID(inst.ID), id) {
				if found != nil {
					return nil, ec2Error(codeInvalidParameterValue, "The instance id '%s' is ambiguous.", id)
				}
				found = inst
			}
		}
		if found == nil {
			missing = append(missing, id)
			continue
		}
		out = append(out, found)
	}
	if len(missing) > 0 {
		return nil, ec2Error(codeInstanceNotFound, "The instance IDs '%s' do not exist", strings.Join(missing, ", "))
	}
	return out, nil
}

// instanceIDsParam reads InstanceId.n, at least one.
func (q *request) instanceIDsParam() ([]string, error) {
	ids := q.list("InstanceId")
	if len(ids) == 0 {
		return nil, ec2Error(codeMissingParameter, "The request must contain the parameter InstanceId.")
	}
	return ids, nil
}

// instanceItem is an instance as DescribeInstances and RunInstances
// show it.
type instanceItem struct {
	InstanceID     string        `xml:"instanceId"`
	ImageID        string        `xml:"imageId"`
	InstanceState  instanceState `xml:"instanceState"`
	PrivateDNSName string        `xml:"privateDnsName"`
	DNSName        string        `xml:"dnsName"`
	Reason         string        `xml:"reason"`
	KeyName        string        `xml:"keyName,omitempty"`
	AMILaunchIndex int           `xml:"amiLaunchIndex"`
	InstanceType   string        `xml:"instanceType"`
	LaunchTime     string        `xml:"launchTime"`
	Placement      struct {
		AvailabilityZone string `xml:"availabilityZone"`
		Tenancy          string `xml:"tenancy"`
	} `xml:"placement"`
	Monitoring struct {
		State string `xml:"state"`
	} `xml:"monitoring"`
	Architecture       string   `xml:"architecture"`
	RootDeviceType     string   `xml:"rootDeviceType"`
	RootDeviceName     string   `xml:"rootDeviceName"`
	VirtualizationType string   `xml:"virtualizationType"`
	Hypervisor         string   `xml:"hypervisor"`
	ClientToken        string   `xml:"clientToken,omitempty"`
	PrivateIPAddress   string   `xml:"privateIpAddress,omitempty"`
	IPAddress          string   `xml:"ipAddress,omitempty"`
	SubnetID           string   `xml:"subnetId,omitempty"`
	VpcID              string   `xml:"vpcId,omitempty"`
	TagSet             []tagRef `xml:"tagSet>item"`
}

// tagRef is a key and value of a tagSet.
type tagRef struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// viewInstance shows an instance as EC2 does: tags are its metadata.
func viewInstance(inst *structs.Instance) instanceItem {
	it := instanceItem{InstanceID: instanceID(inst.ID), InstanceState: stateOf(inst), KeyName: inst.KeyName,
		AMILaunchIndex: inst.LaunchIndex, LaunchTime: isoTime(max(inst.LaunchedAt, inst.CreatedAt)),
		Architecture: "x86_64", RootDeviceType: "instance-store", RootDeviceName: "/dev/vda",
		VirtualizationType: "hvm", Hypervisor: "kvm", ClientToken: inst.Metadata[clientTokenKey]}
	if inst.LaunchedAt == 0 {
		it.LaunchTime = isoTime(inst.CreatedAt)
	}
	if inst.ImageID != "" {
		it.ImageID = imageID(inst.ImageID)
	}
	it.InstanceType = inst.FlavorID
	if inst.Flavor != nil && inst.Flavor.Name != "" {
		it.InstanceType = inst.Flavor.Name
	}
	it.Placement.AvailabilityZone, it.Placement.Tenancy = inst.AZ, "default"
	it.Monitoring.State = "disabled"
	if inst.Fault != nil && it.InstanceState == stateTerminated && inst.VMState == structs.VMStateError {
		it.Reason = "Server.InternalError: " + inst.Fault.Message
	}
	it.TagSet = tagsOf(inst)
	return it
}

// tagsOf is an instance's EC2 tags: its metadata, sorted by key, less
// the keys the API keeps for itself.
func tagsOf(inst *structs.Instance) []tagRef {
	keys := make([]string, 0, len(inst.Metadata))
	for k := range inst.Metadata {
		if k != clientTokenKey {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]tagRef, 0, len(keys))
	for _, k := range keys {
		out = append(out, tagRef{Key: k, Value: inst.Metadata[k]})
	}
	return out
}

// reservation is one reservationSet item: the instances of one launch.
type reservation struct {
	ReservationID string         `xml:"reservationId"`
	OwnerID       string         `xml:"ownerId"`
	Groups        []struct{}     `xml:"groupSet>item"`
	Instances     []instanceItem `xml:"instancesSet>item"`
}

// reservations groups instances by their launch (Nova's reservation id)
// in the order of their first instance.
func reservations(insts []*structs.Instance) []reservation {
	var out []reservation
	index := map[string]int{}
	for _, inst := range insts {
		key := inst.ReservationID
		if key == "" {
			key = inst.ID
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, reservation{ReservationID: reservationID(strings.TrimPrefix(key, "r-")), OwnerID: inst.ProjectID})
		}
		out[i].Instances = append(out[i].Instances, viewInstance(inst))
	}
	return out
}

// describeInstancesResponse is DescribeInstances's answer.
type describeInstancesResponse struct {
	XMLName xml.Name `xml:"DescribeInstancesResponse"`
	meta
	Reservations []reservation `xml:"reservationSet>item"`
	NextToken    string        `xml:"nextToken,omitempty"`
}
