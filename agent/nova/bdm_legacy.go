package nova

import (
	"encoding/json"
	"regexp"
	"strings"
)

// The legacy block_device_mapping (Nova's v1 format, which novaclient's
// --block-device-mapping and older tools still send) is translated into
// block_device_mapping_v2 entries, as Nova's from_legacy_mapping does,
// and then follows the v2 path: a volume_id names an existing volume, a
// snapshot_id a volume to make from a snapshot, a virtual_name of swap
// or ephemeralN a blank local disk. A volume or snapshot mapped to the
// root device name is the root disk (boot index 0); the rest are data
// disks. The root device name is Nova's default, vda, since an image's
// root_device_name property is not looked at before the create.

// legacyRootDevice is Nova's root device name when none is supplied.
const legacyRootDevice = "vda"

// legacyBDMSchema is Nova's _legacy_block_device_mapping.
func legacyBDMSchema() *schema {
	return &schema{types: tArray, items: &schema{types: tObject, props: legacyBDMProps(legacyDeviceNamePat)}}
}

// legacyBDMProps are the fields of a legacy mapping, which Nova's v2
// mapping extends (its device_name pattern differs).
func legacyBDMProps(devicePattern *regexp.Regexp) map[string]*schema {
	return map[string]*schema{
		"virtual_name":          {types: tString, maxLen: 255},
		"volume_id":             {types: tString, format: checkUUID},
		"snapshot_id":           {types: tString, format: checkUUID},
		"volume_size":           intSchema(1, 0x7FFFFFFF),
		"device_name":           {types: tString, minLen: 1, maxLen: 255, pattern: devicePattern},
		"delete_on_termination": booleanSchema,
		"no_device":             {types: tString | tInteger | tNumber | tBoolean | tNull | tObject | tArray, open: true},
		"connection_info":       {types: tString, maxLen: 16777215},
	}
}

var (
	legacyDeviceNamePat = regexp.MustCompile(`^[a-zA-Z0-9._/-]*$`)
	ephemeralName       = regexp.MustCompile(`^ephemeral(\d|[1-9]\d+)$`)
)

// legacyToV2 replaces a create's legacy block_device_mapping with the
// v2 entries it stands for. Both at once is Nova's 400.
func legacyToV2(in map[string]any) error {
	legacy, _ := in["block_device_mapping"].([]any)
	if len(legacy) == 0 {
		return nil
	}
	if v2, _ := in["block_device_mapping_v2"].([]any); len(v2) > 0 {
		return badRequest("Using different block_device_mapping syntaxes is not allowed in the same request.")
	}
	out := make([]any, 0, len(legacy))
	for _, item := range legacy {
		old, _ := item.(map[string]any)
		bdm, err := fromLegacy(old)
		if err != nil {
			return err
		}
		if bdm != nil {
			out = append(out, bdm)
		}
	}
	delete(in, "block_device_mapping")
	in["block_device_mapping_v2"] = out
	return nil
}

// fromLegacy is Nova's BlockDeviceDict.from_legacy with the boot index
// from_legacy_mapping gives it; nil for a no_device entry, which only
// hides an image's mapping Stratus does not have.
func fromLegacy(old map[string]any) (map[string]any, error) {
	bdm := map[string]any{"boot_index": json.Number("-1")}
	for _, k := range []string{"device_name", "volume_size", "delete_on_termination"} {
		if v, ok := old[k]; ok {
			bdm[k] = v
		}
	}
	virtual, _ := stringOf(old, "virtual_name")
	volume, _ := stringOf(old, "volume_id")
	snapshot, _ := stringOf(old, "snapshot_id")
	switch {
	case virtual == "swap" || ephemeralName.MatchString(virtual):
		bdm["source_type"], bdm["destination_type"], bdm["delete_on_termination"] = "blank", "local", true
		if virtual == "swap" {
			bdm["guest_format"] = "swap"
		}
		return bdm, nil
	case snapshot != "":
		bdm["source_type"], bdm["uuid"] = "snapshot", snapshot
	case volume != "":
		bdm["source_type"], bdm["uuid"] = "volume", volume
	case truthy(old["no_device"]):
		return nil, nil
	default:
		return nil, bdmFault("Unrecognized legacy format.")
	}
	bdm["destination_type"] = "volume"
	if dev, _ := stringOf(old, "device_name"); strings.TrimPrefix(dev, "/dev/") == legacyRootDevice {
		bdm["boot_index"] = json.Number("0")
	}
	return bdm, nil
}

// truthy is Python's truth of a JSON value, as Nova tests no_device.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}
