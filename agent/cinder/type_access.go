package cinder

import (
	"encoding/json"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// typeAccessList answers GET /types/{id}/os-volume-type-access (admins):
// the projects of a private type.
func (a *API) typeAccessList(q *request) error {
	var out structs.SingleVolumeTypeResponse
	if err := q.call("Volume.TypeGet", &structs.VolumeTypeSpecificRequest{TypeID: q.param("id")}, &out); err != nil {
		return err
	}
	t := out.Type
	if t.IsPublic {
		return errorf(http.StatusNotFound, "Access list not available for public volume types.")
	}
	list := []map[string]string{}
	for _, p := range t.Projects {
		list = append(list, map[string]string{"volume_type_id": t.ID, "project_id": p})
	}
	return q.json(http.StatusOK, map[string]any{"volume_type_access": list})
}

// typeAction answers POST /types/{id}/action (admins): addProjectAccess
// and removeProjectAccess {"project": id}, 202.
func (a *API) typeAction(q *request) error {
	var body map[string]json.RawMessage
	if err := q.decode(&body); err != nil {
		return err
	}
	if len(body) != 1 {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	for name, raw := range body {
		if name != "addProjectAccess" && name != "removeProjectAccess" {
			return errorf(http.StatusBadRequest, "There is no such action: %s", name)
		}
		var args map[string]json.RawMessage
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. %s is not of type 'object'", name, raw, raw)
		}
		for k := range args {
			if k != "project" {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. Additional properties are not allowed ('%s' was unexpected)", name, raw, k)
			}
		}
		if args["project"] == nil {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. 'project' is a required property", name, raw)
		}
		project, err := jsonString("project", args["project"], true, 255)
		if err != nil {
			return err
		}
		err = q.call("Volume.TypeAccess", &structs.VolumeTypeAccessRequest{TypeID: q.param("id"), ProjectID: project,
			Remove: name == "removeProjectAccess"}, &structs.SingleVolumeTypeResponse{})
		if err != nil {
			return err
		}
	}
	return q.empty(http.StatusAccepted)
}
