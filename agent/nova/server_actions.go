package nova

import (
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

func (a *API) serverActionRoutes() []routeSpec {
	return []routeSpec{
		{pattern: "POST /servers/{id}/action", access: reader, policy: serverRule + "action", handle: a.serverAction},
	}
}

// powerActions are the server actions Stratus performs, with their
// policy rule and how they map to Instance.Action.
var powerActions = map[string]struct {
	rule   string
	action func(body any) (string, error)
}{
	"reboot":   {serverRule + "reboot", rebootAction},
	"os-start": {serverRule + "start", func(any) (string, error) { return "start", nil }},
	"os-stop":  {serverRule + "stop", func(any) (string, error) { return "stop", nil }},
}

// knownActions are Nova's other server actions, which Stratus does not
// support yet: they answer Nova's "not supported" 501, while an unknown
// action is "There is no such action".
var knownActions = []string{"pause", "unpause", "suspend", "resume", "resize", "confirmResize", "revertResize",
	"rebuild", "createImage", "createBackup", "changePassword", "lock", "unlock", "rescue", "unrescue",
	"shelve", "shelveOffload", "unshelve", "migrate", "os-migrateLive", "evacuate", "addSecurityGroup",
	"removeSecurityGroup", "forceDelete", "restore", "trigger_crash_dump", "os-resetState", "resetNetwork",
	"injectNetworkInfo", "os-getConsoleOutput", "os-getVNCConsole", "os-getSPICEConsole", "os-getSerialConsole",
	"os-getRDPConsole", "addFixedIp", "removeFixedIp", "addFloatingIp", "removeFloatingIp", "os-resetNetwork"}

var rebootSchema = &schema{types: tObject, required: []string{"type"}, props: map[string]*schema{
	"type": {types: tString, enum: []string{"HARD", "Hard", "hard", "SOFT", "Soft", "soft"}},
}}

func rebootAction(body any) (string, error) {
	if err := rebootSchema.validate(body, []string{"reboot"}); err != nil {
		return "", err
	}
	if strings.EqualFold(body.(map[string]any)["type"].(string), "HARD") {
		return structs.ActionRebootHard, nil
	}
	return structs.ActionRebootSoft, nil
}

// anyBody accepts any JSON value; actions validate their own part.
var anyBody = &schema{types: tObject, open: true}

// serverAction answers POST /servers/{id}/action: a body of exactly one
// action. Start, stop and reboot go to Instance.Action (202); Nova's
// state rules answer 409 conflictingRequest.
func (a *API) serverAction(q *request) (*reply, error) {
	body, err := decodeBody(q, anyBody)
	if err != nil {
		return nil, err
	}
	if len(body) != 1 {
		return nil, badRequest("Malformed request body")
	}
	var name string
	for k := range body {
		name = k
	}
	act, ok := powerActions[name]
	if !ok {
		if containsString(knownActions, name) {
			if _, err := q.getServer(q.param("id")); err != nil {
				return nil, err
			}
			return nil, notSupported()
		}
		return nil, badRequest("There is no such action: %s", name)
	}
	action, err := act.action(body[name])
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if !q.isMember() {
		return nil, policyFault(act.rule)
	}
	err = q.call("Instance.Action", &structs.InstanceActionRequest{InstanceID: inst.ID, Action: action}, &structs.GenericResponse{})
	if err != nil {
		return nil, notFoundAs(err, "Instance %s could not be found.", inst.ID)
	}
	return acceptedReply(nil)
}
