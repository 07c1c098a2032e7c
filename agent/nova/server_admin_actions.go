package nova

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's admin actions (os-admin-actions) that Stratus performs.

// adminActions are merged into serverActions.
func adminActions() map[string]*serverActionSpec {
	return map[string]*serverActionSpec{
		"os-resetState": {rule: "os_compute_api:os-admin-actions:reset_state", admin: true,
			schema: func(int) *schema { return resetStateSchema }, do: actResetState},
	}
}

// resetStateSchema is Nova's reset_server_state schema.
var resetStateSchema = &schema{types: tObject, required: []string{"state"}, props: map[string]*schema{
	"state": {types: tString, enum: []string{"active", "error"}},
}}

// actResetState forces the server's vm_state and clears its task_state;
// it answers 202 with no body, as Nova does.
func actResetState(q *request, inst *structs.Instance, arg any) (*reply, error) {
	state, _ := arg.(map[string]any)["state"].(string)
	if _, err := q.runTask(inst, "os-resetState", structs.OpResetState, func(r *structs.InstanceTaskRequest) {
		r.State = state
	}); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}
