package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

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

// checkAutoDisk is Nova's _ensure_auto_disk_config_is_valid: AUTO is
// refused (400) for an image whose auto_disk_config property is
// "disabled". props are the image's properties.
func checkAutoDisk(auto *bool, imageID string, props map[string]string) error {
	if auto != nil && *auto && props["auto_disk_config"] == "disabled" {
		return badRequest("Requested image %s has automatic disk resize disabled.", imageID)
	}
	return nil
}

// checkRebuildAutoDisk checks a rebuild's AUTO against its new image;
// an image that cannot be read is left for the rebuild to refuse.
func (q *request) checkRebuildAutoDisk(auto *bool, imageID string) error {
	if auto == nil || !*auto {
		return nil
	}
	img, err := q.getImage(imageID)
	if isStatus(err, http.StatusNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkAutoDisk(auto, img.ID, img.Properties)
}
