package nova

import (
	"net/http"
	"regexp"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Server shares (2.97): Manila shares mounted into a guest with
// virtiofs. Nova attaches one only when the server's host has the
// COMPUTE_STORAGE_VIRTIO_FS trait (and file-backed or huge-page memory)
// and the share service knows the share. No Stratus driver offers
// virtiofs and there is no share service, so every server answers as
// one on a Nova host without virtiofs: no shares attached, an attach
// refused with Nova's "not configured correctly" 409 after the state
// check, a detach or show of any share "could not be found".

const sharesRule = "compute:server:shares:"

// msgSharesNotConfigured is Nova's ForbiddenSharesNotConfiguredCorrectly.
const msgSharesNotConfigured = "Feature not supported because either compute or instance are not configured correctly."

func (a *API) shareRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/shares", MinVersion: 97, Access: reader, Policy: sharesRule + "index", Handle: a.listShares},
		{Pattern: "POST /servers/{id}/shares", MinVersion: 97, Access: member, Policy: sharesRule + "create", Handle: a.createShare},
		{Pattern: "GET /servers/{id}/shares/{share}", MinVersion: 97, Access: reader, Policy: sharesRule + "show", Handle: a.showShare},
		{Pattern: "DELETE /servers/{id}/shares/{share}", MinVersion: 97, Access: member, Policy: sharesRule + "delete", Handle: a.deleteShare},
	}
}

// shareTagPattern is Nova's share_tag pattern.
var shareTagPattern = regexp.MustCompile(`^[a-zA-Z0-9-]*$`)

// shareCreateSchema is Nova's server_shares create schema.
var shareCreateSchema = &schema{types: tObject, required: []string{"share"}, props: map[string]*schema{
	"share": {types: tObject, required: []string{"share_id"}, props: map[string]*schema{
		"share_id": {types: tString, format: checkUUID},
		"tag":      {types: tString, minLen: 1, maxLen: 255, pattern: shareTagPattern},
	}},
}}

func (a *API) listShares(q *request) (*reply, error) {
	if _, err := q.getServer(q.param("id")); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"shares": []any{}})
}

func (a *API) showShare(q *request) (*reply, error) {
	if _, err := q.getServer(q.param("id")); err != nil {
		return nil, err
	}
	return nil, notFound("Share %s could not be found.", q.param("share"))
}

func (a *API) createShare(q *request) (*reply, error) {
	if _, err := decodeBody(q, shareCreateSchema); err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if err := shareState(inst, "create share", false); err != nil {
		return nil, err
	}
	return nil, faultf(http.StatusConflict, msgSharesNotConfigured)
}

func (a *API) deleteShare(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if err := shareState(inst, "delete share", true); err != nil {
		return nil, err
	}
	return nil, notFound("Share %s could not be found.", q.param("share"))
}

// shareState is Nova's _check_instance_in_valid_state: a share is
// attached to a stopped server and detached from a stopped or failed one.
func shareState(inst *structs.Instance, action string, errorOK bool) error {
	if inst.VMState == structs.VMStateStopped || (errorOK && inst.VMState == structs.VMStateError) {
		return nil
	}
	return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in vm_state %s", action, inst.ID, inst.VMState)
}
