package nova

import (
	"net/http"
	"time"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// os-server-external-events: the admin API other services (Neutron,
// Cinder, Ironic, Cyborg) use to tell the compute service about what
// happened to a server's ports, volumes, power or accelerators.
//
// The answer is Nova's: every event comes back with a code and status —
// 200 "completed" when the server is on a host, 404 "failed" for a server
// that does not exist, 422 "failed" for one on no host (not scheduled,
// shelved offloaded), 400 "failed" for an event that needs a tag and has
// none — and the whole answer is 200 when every event was accepted, 207
// otherwise (even when none was, since Nova's fix of bug 1855752).
//
// What an accepted event does is what Nova's compute manager does with
// it, where Stratus has the concept:
//   - power-update (2.76) POWER_ON/POWER_OFF starts or stops the server
//     through the task engine (recorded as the "start"/"stop" instance
//     action under this request's id) when it is stably SHUTOFF or ACTIVE
//     and running, and is a no-op otherwise, as Nova's power_update (the
//     action is recorded then too, with its compute_power_update event);
//   - volume-extended records Nova's "extend_volume" instance action with
//     its compute_extend_volume event. Growing the guest's disk needs no
//     event here: Stratus's volume service extends in-use volumes
//     (Cinder 3.42) itself, and the compute agent of the server's host
//     grows every attached disk smaller than its volume's record
//     (client/volume_extend.go), so the disk of a volume the event names
//     has grown, or will, whether or not the event comes, and one not
//     attached to the server is left alone, as Nova's handler does;
//   - network-changed refreshes Nova's cache of the server's ports, and
//     network-vif-plugged/-unplugged wake the compute tasks waiting for
//     them: Stratus caches no port (every view reads the network state)
//     and its agents plug VIFs themselves without waiting, so these are
//     accepted with nothing left to do;
//   - network-vif-deleted, accelerator-request-bound (2.82) and
//     volume-reimaged (2.93) need interface hot-unplug driven by Neutron,
//     Cyborg and Cinder, which Stratus lacks: accepted only.

const externalEventsRule = "os_compute_api:os-server-external-events:create"

func (a *API) externalEventRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "POST /os-server-external-events", Access: admin, Policy: externalEventsRule, Handle: a.externalEvents},
	}
}

// Nova's power-update tags.
const (
	powerOn  = "POWER_ON"
	powerOff = "POWER_OFF"
)

// externalEventNames are the event names each microversion accepts.
func externalEventNames(mv int) []string {
	names := []string{"network-changed", "network-vif-plugged", "network-vif-unplugged", "network-vif-deleted"}
	for _, n := range []struct {
		since int
		name  string
	}{{51, "volume-extended"}, {76, "power-update"}, {82, "accelerator-request-bound"}, {93, "volume-reimaged"}} {
		if mv >= n.since {
			names = append(names, n.name)
		}
	}
	return names
}

// externalEventsSchema is Nova's create schema at mv.
func externalEventsSchema(mv int) *schema {
	return &schema{types: tObject, required: []string{"events"}, props: map[string]*schema{
		"events": {types: tArray, minItems: 1, items: &schema{types: tObject, required: []string{"name", "server_uuid"},
			props: map[string]*schema{
				"name":        {types: tString, enum: externalEventNames(mv)},
				"server_uuid": {types: tString, format: checkUUID},
				"status":      {types: tString, enum: []string{"failed", "completed", "in-progress"}},
				"tag":         {types: tString, maxLen: 255},
			}}},
	}}
}

// tagRequired are the events Nova drops (400) without a tag.
var tagRequired = map[string]bool{"volume-extended": true, "power-update": true, "accelerator-request-bound": true}

// acceptedEvent is an event whose server is on a host.
type acceptedEvent struct {
	name, tag string
	inst      *structs.Instance
}

// externalEvents answers POST /os-server-external-events.
func (a *API) externalEvents(q *request) (*reply, error) {
	body, err := decodeBody(q, externalEventsSchema(q.mv))
	if err != nil {
		return nil, err
	}
	events, _ := body["events"].([]any)
	status := http.StatusOK
	found := map[string]*structs.Instance{}
	var accepted []acceptedEvent
	for _, e := range events {
		ev := e.(map[string]any)
		id, _ := ev["server_uuid"].(string)
		name, _ := ev["name"].(string)
		tag, hasTag := ev["tag"].(string)
		inst, ok := found[id]
		if !ok {
			if inst, err = q.eventServer(id); err != nil {
				return nil, err
			}
			found[id] = inst
		}
		code := http.StatusOK
		switch {
		case inst == nil:
			code = http.StatusNotFound
		case tagRequired[name] && !hasTag:
			code = http.StatusBadRequest
		case inst.HostID == "":
			code = http.StatusUnprocessableEntity
		}
		ev["code"] = code
		if code != http.StatusOK {
			ev["status"], status = "failed", http.StatusMultiStatus
			continue
		}
		ev["status"] = "completed"
		accepted = append(accepted, acceptedEvent{name: name, tag: tag, inst: inst})
	}
	for _, ev := range accepted {
		q.dispatchEvent(ev)
	}
	return &reply{status: status, body: map[string]any{"events": events}}, nil
}

// eventServer finds an event's server in any project; nil when there is
// none (or it is deleted), as Nova's lookup of non-deleted instances.
func (q *request) eventServer(id string) (*structs.Instance, error) {
	var out structs.SingleInstanceResponse
	err := q.call("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &out)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if out.Instance == nil || out.Instance.VMState == structs.VMStateDeleted {
		return nil, nil
	}
	return out.Instance, nil
}

// dispatchEvent does what Nova's compute manager does with an accepted
// event (see the file's comment). As in Nova it is best effort: the
// event was accepted whatever comes of it, so failures are logged.
func (q *request) dispatchEvent(ev acceptedEvent) {
	switch ev.name {
	case "power-update":
		q.powerUpdate(ev.inst, ev.tag)
	case "volume-extended":
		start := time.Now().UnixNano()
		q.recordGuestAction(ev.inst, "extend_volume", "compute_extend_volume", start, nil)
	}
}

// powerUpdate is Nova's power_update: POWER_ON of a stable stopped
// server starts it, POWER_OFF of a stable running one stops it, any
// other state (or tag) makes it a no-op.
func (q *request) powerUpdate(inst *structs.Instance, tag string) {
	var action, op string
	switch {
	case tag == powerOn && inst.Stable() && inst.VMState == structs.VMStateStopped && inst.PowerState == structs.PowerShutdown:
		action, op = "start", structs.OpStart
	case tag == powerOff && inst.Stable() && inst.VMState == structs.VMStateActive && inst.PowerState == structs.PowerRunning:
		action, op = "stop", structs.OpStop
	default:
		q.api.logger.Info("power-update event is a no-op in this state", "instance", inst.ID, "tag", tag,
			"vm_state", inst.VMState, "task_state", inst.TaskState, "power_state", inst.PowerState)
		// Nova records the action of a known tag all the same, its
		// compute_power_update event succeeding with nothing to do.
		if noop := map[string]string{powerOn: "start", powerOff: "stop"}[tag]; noop != "" {
			q.recordGuestAction(inst, noop, "compute_power_update", time.Now().UnixNano(), nil)
		}
		return
	}
	if _, err := q.runTask(inst, action, op, nil); err != nil {
		q.api.logger.Info("power-update event was preempted", "instance", inst.ID, "tag", tag, "error", err)
	}
}
