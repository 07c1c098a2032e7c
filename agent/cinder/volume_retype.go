package cinder

import (
	"encoding/json"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// retype answers os-retype: {"new_type": name or id, "migration_policy":
// "never" | "on-demand" | null}, checked as Cinder's schema does; 202
// once the volume has its new type (the servers refuse a retype that
// would move the volume to another backend).
func (q *request) retype(raw json.RawMessage) error {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-retype. Value: %s. %s is not of type 'object'", raw, raw)
	}
	for k := range body {
		if k != "new_type" && k != "migration_policy" {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-retype. Value: %s. Additional properties are not allowed ('%s' was unexpected)", raw, k)
		}
	}
	if body["new_type"] == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-retype. Value: %s. 'new_type' is a required property", raw)
	}
	newType, err := jsonString("new_type", body["new_type"], false, 1<<20)
	if err != nil {
		return err
	}
	policy := ""
	if r := body["migration_policy"]; r != nil && string(r) != "null" {
		if policy, err = jsonString("migration_policy", r, false, 255); err != nil {
			return err
		}
		if policy != "never" && policy != "on-demand" {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute migration_policy. Value: %s. '%s' is not one of ['on-demand', 'never']", policy, policy)
		}
	}
	err = q.call("Volume.Retype", &structs.VolumeRetypeRequest{VolumeID: q.param("id"), ProjectID: q.ownerScope(),
		NewType: newType, MigrationPolicy: policy}, &structs.SingleVolumeResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
