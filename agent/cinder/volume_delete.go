package cinder

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// boolParam reads a query parameter as Cinder's get_bool_param does:
// absent is false, anything oslo's strutils does not take for a
// boolean is a 400.
func (q *request) boolParam(name string) (bool, error) {
	qs := q.r.URL.Query()
	if !qs.Has(name) {
		return false, nil
	}
	v := qs.Get(name)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, errorf(http.StatusBadRequest, "Value '%s' for '%s' is not a boolean.", v, name)
}

// deleteParams reads DELETE /volumes/{id}'s cascade and (3.23) force;
// force is Cinder's volume:force_delete rule, admins'.
func (q *request) deleteParams() (*structs.VolumeDeleteRequest, error) {
	req := &structs.VolumeDeleteRequest{VolumeID: q.param("id"), ProjectID: q.ownerScope()}
	var err error
	if req.Cascade, err = q.boolParam("cascade"); err != nil {
		return nil, err
	}
	if q.at(mvVolumeDeleteForce) {
		if req.Force, err = q.boolParam("force"); err != nil {
			return nil, err
		}
	}
	if req.Force && !q.isAdmin() {
		return nil, errorf(http.StatusForbidden, "Policy doesn't allow volume:force_delete to be performed.")
	}
	return req, nil
}
