package ec2

import (
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/structs"
)

// imagesOf lists the images the caller's project may boot (Image.List,
// as the Compute API's image list).
func (q *request) imagesOf() ([]*structs.Image, error) {
	var out structs.ImageListResponse
	if err := q.call("Image.List", &structs.ImageListRequest{MemberProjectID: q.caller.ProjectID}, &out); err != nil {
		return nil, err
	}
	return out.Images, nil
}

// resolveImage maps an ami- id to the image's UUID.
func (q *request) resolveImage(id string) (string, error) {
	if !validID("ami", id) {
		return "", ec2Error(codeInvalidAMIMalformed, "Invalid id: \"%s\" (expecting \"ami-...\")", id)
	}
	images, err := q.imagesOf()
	if err != nil {
		return "", err
	}
	for _, img := range images {
		if strings.HasPrefix(imageID(img.ID), id) {
			return img.ID, nil
		}
	}
	return "", ec2Error(codeInvalidAMINotFound, "The image id '[%s]' does not exist", id)
}

type imageItem struct {
	ImageID            string   `xml:"imageId"`
	ImageLocation      string   `xml:"imageLocation"`
	ImageState         string   `xml:"imageState"`
	ImageOwnerID       string   `xml:"imageOwnerId"`
	IsPublic           bool     `xml:"isPublic"`
	Architecture       string   `xml:"architecture"`
	ImageType          string   `xml:"imageType"`
	Name               string   `xml:"name"`
	RootDeviceType     string   `xml:"rootDeviceType"`
	VirtualizationType string   `xml:"virtualizationType"`
	Hypervisor         string   `xml:"hypervisor"`
	TagSet             []tagRef `xml:"tagSet>item"`
}

type describeImagesResponse struct {
	XMLName xml.Name `xml:"DescribeImagesResponse"`
	meta
	Images    []imageItem `xml:"imagesSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

// imageState is EC2's state of a Glance image status.
func imageState(status string) string {
	switch status {
	case "active":
		return "available"
	case "queued", "saving", "importing", "uploading":
		return "pending"
	case "deactivated":
		return "deregistered"
	}
	return "failed"
}

// describeImages answers DescribeImages: the images the project may
// boot, or those of ImageId.n; Owner.n "self" keeps the project's own,
// and the filters image-id, name, state, owner-id, is-public and the
// tag filters (the project's own images' tags) apply; MaxResults
// (5-1000) and NextToken page.
func describeImages(q *request) error {
	images, err := q.imagesOf()
	if err != nil {
		return err
	}
	want := q.list("ImageId")
	owners := q.list("Owner")
	resp := &describeImagesResponse{}
	for _, img := range images {
		item := imageItem{ImageID: imageID(img.ID), ImageLocation: img.Name, ImageState: imageState(img.Status),
			ImageOwnerID: img.Owner, IsPublic: img.Visibility == "public", Architecture: "x86_64", ImageType: "machine",
			Name: img.Name, RootDeviceType: "instance-store", VirtualizationType: "hvm", Hypervisor: "kvm"}
		if img.Owner == q.caller.ProjectID {
			item.TagSet = imageTags(img)
		}
		if len(want) > 0 && !matches(want, item.ImageID) {
			continue
		}
		if len(owners) > 0 && !ownerMatches(owners, img, q.caller.ProjectID) {
			continue
		}
		if !imageMatches(item, q.filters()) {
			continue
		}
		resp.Images = append(resp.Images, item)
	}
	for _, id := range want {
		found := false
		for _, it := range resp.Images {
			found = found || it.ImageID == id
		}
		if !found {
			return ec2Error(codeInvalidAMINotFound, "The image id '[%s]' does not exist", id)
		}
	}
	page, next, err := pageOf(q, pager{min: 5, max: 1000, idsParam: "ImageId"}, resp.Images, func(it imageItem) string { return it.ImageID })
	if err != nil {
		return err
	}
	resp.Images, resp.NextToken = page, next
	return q.reply(resp)
}

func ownerMatches(owners []string, img *structs.Image, project string) bool {
	for _, o := range owners {
		if o == "self" && img.Owner == project || o == img.Owner || o == "amazon" && img.Visibility == "public" {
			return true
		}
	}
	return false
}

func imageMatches(it imageItem, filters []filter) bool {
	for _, f := range filters {
		var v string
		switch f.Name {
		case "image-id":
			v = it.ImageID
		case "name":
			v = it.Name
		case "state":
			v = it.ImageState
		case "owner-id":
			v = it.ImageOwnerID
		case "is-public":
			v = strconv.FormatBool(it.IsPublic)
		case "tag-key", "tag-value":
			if !tagMatches(it.TagSet, f) {
				return false
			}
			continue
		default:
			if strings.HasPrefix(f.Name, "tag:") && !tagMatches(it.TagSet, f) {
				return false
			}
			continue
		}
		if !matches(f.Values, v) {
			return false
		}
	}
	return true
}

// describeRegions answers DescribeRegions: the Stratus region, whose
// endpoint is the one the request came to.
func describeRegions(q *request) error {
	resp := &describeRegionsResponse{}
	resp.Regions = append(resp.Regions, regionItem{Name: q.api.region, Endpoint: httpx.ExternalBase(q.r) + MountPath + "/", OptIn: "opt-in-not-required"})
	return q.reply(resp)
}

type regionItem struct {
	Name     string `xml:"regionName"`
	Endpoint string `xml:"regionEndpoint"`
	OptIn    string `xml:"optInStatus"`
}

type describeRegionsResponse struct {
	XMLName xml.Name `xml:"DescribeRegionsResponse"`
	meta
	Regions []regionItem `xml:"regionInfo>item"`
}

// describeAvailabilityZones answers DescribeAvailabilityZones: the
// agent's zone, the zones of the project's instances and those of the
// storage hosts (CreateVolume's zones), all "available" (the zone list
// with hosts is the admins').
func describeAvailabilityZones(q *request) error {
	zones := map[string]bool{}
	if q.api.zone != "" {
		zones[q.api.zone] = true
	}
	insts, err := q.instancesOf()
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if inst.AZ != "" {
			zones[inst.AZ] = true
		}
	}
	var vz structs.VolumeZonesResponse
	if err := q.call("Volume.Zones", &structs.VolumeZonesRequest{}, &vz); err != nil {
		return err
	}
	for _, z := range vz.Zones {
		zones[z.Name] = true
	}
	want := q.list("ZoneName")
	resp := &describeZonesResponse{}
	for _, z := range sortedKeys(zones) {
		if len(want) > 0 && !matches(want, z) {
			continue
		}
		resp.Zones = append(resp.Zones, zoneItem{Name: z, State: "available", Region: q.api.region, ZoneID: z, ZoneType: "availability-zone"})
	}
	return q.reply(resp)
}

type zoneItem struct {
	Name     string `xml:"zoneName"`
	State    string `xml:"zoneState"`
	Region   string `xml:"regionName"`
	ZoneID   string `xml:"zoneId"`
	ZoneType string `xml:"zoneType"`
}

type describeZonesResponse struct {
	XMLName xml.Name `xml:"DescribeAvailabilityZonesResponse"`
	meta
	Zones []zoneItem `xml:"availabilityZoneInfo>item"`
}

// describeInstanceTypes answers DescribeInstanceTypes: the flavors the
// project may use, by name, or those of InstanceType.n, paged with
// MaxResults (5-100) and NextToken.
func describeInstanceTypes(q *request) error {
	var out structs.FlavorListResponse
	if err := q.call("Flavor.List", &structs.FlavorListRequest{}, &out); err != nil {
		return err
	}
	want := q.list("InstanceType")
	resp := &describeInstanceTypesResponse{}
	for _, f := range out.Flavors {
		if f.Disabled || len(want) > 0 && !matches(want, f.Name) {
			continue
		}
		it := instanceTypeItem{InstanceType: f.Name, CurrentGeneration: true, Hypervisor: "kvm"}
		it.VCPU.DefaultVCpus = f.VCPUs
		it.Memory.SizeInMiB = f.MemoryMB
		it.InstanceStorageSupported = f.RootGB > 0
		it.InstanceStorageInfo.TotalSizeInGB = f.RootGB + f.EphemeralGB
		it.ProcessorInfo.SupportedArchitectures = []string{"x86_64"}
		resp.Types = append(resp.Types, it)
	}
	var err error
	if resp.Types, resp.NextToken, err = pageOf(q, pager{min: 5, max: 100, idsParam: "InstanceType"}, resp.Types, func(it instanceTypeItem) string { return it.InstanceType }); err != nil {
		return err
	}
	return q.reply(resp)
}

type instanceTypeItem struct {
	InstanceType      string `xml:"instanceType"`
	CurrentGeneration bool   `xml:"currentGeneration"`
	Hypervisor        string `xml:"hypervisor"`
	VCPU              struct {
		DefaultVCpus int `xml:"defaultVCpus"`
	} `xml:"vCpuInfo"`
	Memory struct {
		SizeInMiB int `xml:"sizeInMiB"`
	} `xml:"memoryInfo"`
	InstanceStorageSupported bool `xml:"instanceStorageSupported"`
	InstanceStorageInfo      struct {
		TotalSizeInGB int `xml:"totalSizeInGB"`
	} `xml:"instanceStorageInfo"`
	ProcessorInfo struct {
		SupportedArchitectures []string `xml:"supportedArchitectures>item"`
	} `xml:"processorInfo"`
}

type describeInstanceTypesResponse struct {
	XMLName xml.Name `xml:"DescribeInstanceTypesResponse"`
	meta
	Types     []instanceTypeItem `xml:"instanceTypeSet>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}
