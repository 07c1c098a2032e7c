package nova

import "github.com/stratus-cloud/stratus/structs"

// OS-DCF:diskConfig is Nova's auto_disk_config as the API spells it:
// AUTO grows the guest's root partition to its disk, MANUAL leaves it.
// Create, rebuild, resize and update take it (the schemas allow only
// the two values) and every server view shows it.

// diskConfigOf reads a body's OS-DCF:diskConfig: true for AUTO, false
// for MANUAL, nil when absent.
func diskConfigOf(in map[string]any) *bool {
	v, ok := stringOf(in, "OS-DCF:diskConfig")
	if !ok {
		return nil
	}
	auto := v == "AUTO"
	return &auto
}

// diskConfigView is the instance's OS-DCF:diskConfig.
func diskConfigView(inst *structs.Instance) string {
	if inst.AutoDiskConfig {
		return "AUTO"
	}
	return "MANUAL"
}
