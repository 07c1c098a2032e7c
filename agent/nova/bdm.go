package nova

import (
	"maps"
	"regexp"
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// block_device_mapping_v2 on server create: the image to boot (source
// image, destination local, boot_index 0, with imageRef given, as Nova
// requires), blank local disks, swap (guest_format "swap") or
// ephemeral, within the flavor's swap and ephemeral sizes, and volumes
// (destination volume, or a source volume or snapshot): an existing
// volume, or one made from an image, a snapshot or nothing (blank)
// before the server is created (boot_volumes.go). A volume of boot
// index 0 is the server's root disk. The legacy block_device_mapping
// is translated into these first (bdm_legacy.go).

// maxLocalBlockDevices is Nova's max_local_block_devices default.
const maxLocalBlockDevices = 3

var (
	bdmUUIDPattern      = regexp.MustCompile(`^[a-zA-Z0-9._-]*$`)
	bdmDeviceNamePat    = regexp.MustCompile(`^[a-zA-Z0-9._\-r/]*$`)
	bdmBootIndexPattern = regexp.MustCompile(`^-?[0-9]+$`)
)

// bdmV2Schema is Nova's block_device_mapping_v2 at a microversion.
func bdmV2Schema(mv int) *schema {
	props := legacyBDMProps(bdmDeviceNamePat)
	maps.Copy(props, map[string]*schema{
		"source_type":      {types: tString, enum: []string{"volume", "image", "snapshot", "blank"}},
		"uuid":             {types: tString, minLen: 1, maxLen: 255, pattern: bdmUUIDPattern},
		"image_id":         {types: tString, format: checkUUID},
		"destination_type": {types: tString, enum: []string{"local", "volume"}},
		"guest_format":     {types: tString, maxLen: 255},
		"device_type":      {types: tString, maxLen: 255},
		"disk_bus":         {types: tString, maxLen: 255},
		"boot_index":       {types: tInteger | tString | tNull, pattern: bdmBootIndexPattern},
	})
	if mv == 32 || mv >= 42 {
		props["tag"] = &schema{types: tString, maxLen: 60, pattern: tagPattern}
	}
	if mv >= 67 {
		props["volume_type"] = &schema{types: tString | tNull, maxLen: 255}
	}
	return &schema{types: tArray, items: &schema{types: tObject, props: props}}
}

// localDisks are a create's local block device mappings, validated on
// their own: the image to boot ("" when none names it), the ephemeral
// disks (size in GB, 0 for the flavor's) and the swap disk (MB).
type localDisks struct {
	rootImage string
	ephemeral []int64
	swap      bool
	swapMB    int64
	// volumes are the mappings to volumes, in the request's order.
	volumes []volumeMapping
}

// volumeMapping is one mapping whose destination is a volume.
type volumeMapping struct {
	source, uuid        string
	size                int64
	bootIndex           int64
	deleteOnTermination bool
	device, tag         string
	volumeType          string
}

// bdmFault is Nova's InvalidBDMFormat answer.
func bdmFault(details string) error {
	return badRequest("Block Device Mapping is Invalid: %s", details)
}

// blockDevicesOf reads block_device_mapping_v2 by Nova's rules
// (BlockDeviceDict.from_api, then the boot sequence); nil when the
// request has none.
func blockDevicesOf(in map[string]any) (*localDisks, error) {
	list, _ := in["block_device_mapping_v2"].([]any)
	if len(list) == 0 {
		return nil, nil
	}
	ref, _ := stringOf(in, "imageRef")
	imageGiven := ref != ""
	disks := &localDisks{}
	var bootIndexes []int64
	for _, item := range list {
		bdm, _ := item.(map[string]any)
		dest, _ := stringOf(bdm, "destination_type")
		if dev, _ := stringOf(bdm, "device_name"); imageGiven && dest == "volume" && strings.TrimPrefix(dev, "/dev/") == legacyRootDevice {
			return nil, badRequest("The volume cannot be assigned the same device name as the root device %s", legacyRootDevice)
		}
		bootIndex, err := disks.add(bdm, imageGiven)
		if err != nil {
			return nil, err
		}
		if bootIndex >= 0 {
			bootIndexes = append(bootIndexes, bootIndex)
		}
	}
	return disks, checkBootSequence(bootIndexes, imageGiven)
}

// add reads one mapping into d (BlockDeviceDict.from_api's checks) and
// returns its boot index, -1 for none.
func (d *localDisks) add(bdm map[string]any, imageGiven bool) (int64, error) {
	source, _ := stringOf(bdm, "source_type")
	dest, _ := stringOf(bdm, "destination_type")
	uuid, _ := stringOf(bdm, "uuid")
	volumeType, _ := stringOf(bdm, "volume_type")
	bootIndex := int64(-1)
	if v, ok := bdm["boot_index"]; ok && v != nil {
		bootIndex = intOf(v)
	}
	if truthy(bdm["no_device"]) {
		return -1, nil // hides an image's mapping, which Stratus has none of
	}
	switch {
	case source == "" && uuid != "":
		// Nova files the uuid under "None_id", which its field check
		// then refuses.
		return 0, bdmFault("Following fields are invalid: None_id")
	case source == "blank" && uuid != "":
		return 0, bdmFault("Invalid device UUID.")
	case source != "blank" && uuid == "":
		return 0, bdmFault("Missing device UUID.")
	case source == "image" && dest == "local" && (!imageGiven || bootIndex != 0):
		return 0, bdmFault("Mapping image to local is not supported.")
	case dest == "local" && volumeType != "":
		return 0, bdmFault("Specifying a volume_type with destination_type=local is not supported.")
	case source == "volume" && volumeType != "":
		return 0, bdmFault("Specifying volume type to existing volume is not supported.")
	}
	size := int64(0)
	if v, ok := bdm["volume_size"]; ok && v != nil {
		size = intOf(v)
	}
	switch {
	case dest == "volume" || source == "volume" || source == "snapshot":
		m := volumeMapping{source: source, uuid: uuid, size: size, bootIndex: bootIndex,
			deleteOnTermination: boolOf(bdm["delete_on_termination"]), volumeType: volumeType}
		m.device, _ = stringOf(bdm, "device_name")
		m.tag, _ = stringOf(bdm, "tag")
		d.volumes = append(d.volumes, m)
	case source == "image":
		d.rootImage = uuid
	default: // blank, local
		if bootIndex == 0 {
			return 0, bdmFault("Boot sequence for the instance and image/block device mapping combination is not valid.")
		}
		if f, _ := stringOf(bdm, "guest_format"); f == "swap" {
			if d.swap {
				return 0, bdmFault("More than one swap drive requested.")
			}
			d.swap, d.swapMB = true, size
		} else {
			d.ephemeral = append(d.ephemeral, size)
		}
	}
	return bootIndex, nil
}

// checkBootSequence is Nova's rule that the boot indexes count from 0
// without gaps; imageRef without a mapping of index 0 is index 0.
func checkBootSequence(indexes []int64, imageGiven bool) error {
	if imageGiven && !containsInt(indexes, 0) {
		indexes = append(indexes, 0)
	}
	if len(indexes) == 0 {
		return bdmFault("Boot sequence for the instance and image/block device mapping combination is not valid.")
	}
	sort.Slice(indexes, func(i, j int) bool { return indexes[i] < indexes[j] })
	for i, n := range indexes {
		if n != int64(i) {
			return bdmFault("Boot sequence for the instance and image/block device mapping combination is not valid.")
		}
	}
	return nil
}

func containsInt(list []int64, n int64) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}

// checkFlavor checks the local disks against the flavor, as Nova's
// _validate_bdm: the ephemeral disks together (a size of 0 being the
// flavor's) within its ephemeral_gb, the swap within its swap, and at
// most max_local_block_devices local disks.
func (d *localDisks) checkFlavor(f *structs.Flavor) error {
	if d == nil || f == nil {
		return nil
	}
	var ephemeral int64
	for _, size := range d.ephemeral {
		if size == 0 {
			size = int64(f.EphemeralGB)
		}
		ephemeral += size
	}
	if ephemeral > int64(f.EphemeralGB) {
		return badRequest("Ephemeral disks requested are larger than the instance type allows. If no size is given in one block device mapping, flavor ephemeral size will be used.")
	}
	if d.swap && d.swapMB > int64(f.SwapMB) {
		return badRequest("Swap drive requested is larger than instance type allows.")
	}
	local := len(d.ephemeral)
	if d.swap {
		local++
	}
	if d.rootImage != "" {
		local++
	}
	if local > maxLocalBlockDevices {
		return bdmFault("You specified more local devices than the limit allows")
	}
	return nil
}

// checkLocalDisks checks a create's local disks against its flavor; a
// root image mapping names the image to boot.
func (q *request) checkLocalDisks(d *localDisks, args *structs.InstanceCreateRequest) error {
	if d == nil {
		return nil
	}
	f, err := q.getFlavor(args.FlavorID)
	if err != nil {
		return err
	}
	if err := d.checkFlavor(f); err != nil {
		return err
	}
	if d.rootImage != "" {
		args.ImageID = d.rootImage
	}
	return nil
}
