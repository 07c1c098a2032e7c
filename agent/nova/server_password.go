package nova

import (
	"encoding/base64"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// serverPasswordRoutes are Nova's os-server-password: the encrypted
// password the guest posted to the metadata service, read and cleared.
func (a *API) serverPasswordRoutes() []route.Route[handler] {
	const rule = "os_compute_api:os-server-password:"
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/os-server-password", Access: reader, Policy: rule + "show", Handle: a.serverPasswordShow},
		{Pattern: "DELETE /servers/{id}/os-server-password", Access: member, Policy: rule + "clear", Handle: a.serverPasswordClear},
	}
}

// serverPasswordShow answers GET os-server-password: {"password": …},
// "" when the guest has posted none.
func (a *API) serverPasswordShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"password": inst.Password()})
}

// serverPasswordClear answers DELETE os-server-password: the password is
// removed (the guest's own password is not changed), so the guest may
// post a new one.
func (a *API) serverPasswordClear(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	var out structs.GenericResponse
	if err := q.call("Instance.SetPassword", &structs.InstancePasswordRequest{InstanceID: inst.ID, Clear: true}, &out); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, notFound("Instance %s could not be found.", inst.ID)
		}
		return nil, err
	}
	return noContent()
}

// decodeUserData reads a create request's user_data (base64, already
// checked by the schema) as the bytes the guest is handed.
func decodeUserData(in map[string]any) string {
	s, ok := stringOf(in, "user_data")
	if !ok || s == "" {
		return ""
	}
	clean := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	b, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return ""
	}
	return string(b)
}

// userDataView is OS-EXT-SRV-ATTR:user_data: the user data in base64,
// null when there is none.
func userDataView(inst *structs.Instance) any {
	if inst.UserData == "" {
		return nil
	}
	return base64.StdEncoding.EncodeToString([]byte(inst.UserData))
}

// configDriveView is config_drive: "True" when the instance has a config
// drive (asked for, or required by its image or flavor), "" otherwise.
func configDriveView(inst *structs.Instance) string {
	if inst.NeedsConfigDrive() {
		return "True"
	}
	return ""
}
