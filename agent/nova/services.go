package nova

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const serviceRule = "os_compute_api:os-services:"

// Nova's service binaries: each host runs nova-compute; each server plays
// nova-scheduler and nova-conductor.
const (
	binCompute   = "nova-compute"
	binScheduler = "nova-scheduler"
	binConductor = "nova-conductor"
)

// serviceNamespace derives stable service UUIDs (2.53) from names.
var serviceNamespace = uuid.MustParse("6f1c3e4a-8d0b-5c7e-9a2f-3b4d5e6f7a8b")

func (a *API) serviceRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-services", Access: admin, Policy: serviceRule + "list", Handle: a.serviceList},
		{Pattern: "PUT /os-services/{action}", MaxVersion: 52, Access: admin, Policy: serviceRule + "update", Handle: a.serviceAction},
		{Pattern: "PUT /os-services/{id}", MinVersion: 53, Access: admin, Policy: serviceRule + "update", Handle: a.serviceUpdate},
		{Pattern: "DELETE /os-services/{id}", Access: admin, Policy: serviceRule + "delete", Handle: a.serviceDelete},
	}
}

// service is one Nova service row.
type service struct {
	binary string
	host   *structs.Host // nova-compute only
	member ServerMember  // scheduler and conductor
	id     any
}

// computeServiceID is a host's nova-compute service id: even numbers
// from the host's registration index before 2.53 (odd ones are the
// control-plane services'), a UUID derived from the host's from 2.53.
func (q *request) computeServiceID(h *structs.Host) any {
	if q.atLeast(53) {
		return uuid.NewSHA1(serviceNamespace, []byte(binCompute+"/"+h.ID)).String()
	}
	return 2 * h.CreateIndex
}

// services lists Nova's view of the cluster's services.
func (q *request) services() ([]*service, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	var out []*service
	members := append([]ServerMember(nil), q.api.servers()...)
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	for i, m := range members {
		for j, bin := range []string{binScheduler, binConductor} {
			var id any = uint64(2*(2*i+j) + 1)
			if q.atLeast(53) {
				id = uuid.NewSHA1(serviceNamespace, []byte(bin+"/"+m.Name)).String()
			}
			out = append(out, &service{binary: bin, member: m, id: id})
		}
	}
	for _, h := range hosts {
		out = append(out, &service{binary: binCompute, host: h, id: q.computeServiceID(h)})
	}
	return out, nil
}

func (s *service) hostName() string {
	if s.host != nil {
		return s.host.Name
	}
	return s.member.Name
}

// serviceView is a service in Nova's body.
func (q *request) serviceView(s *service) map[string]any {
	v := map[string]any{"id": s.id, "binary": s.binary, "host": s.hostName(), "zone": internalZone,
		"status": "enabled", "state": "down", "disabled_reason": nil, "updated_at": nil}
	if h := s.host; h != nil {
		v["zone"], v["status"], v["state"] = hostZone(h), hostEnabled(h), hostState(h)
		v["disabled_reason"], v["updated_at"] = nullString(h.DisabledReason), pyTime(h.StatusUpdatedAt)
	} else if s.member.Alive {
		v["state"] = "up"
	}
	if q.atLeast(11) {
		v["forced_down"] = s.host != nil && s.host.ForcedDown
	}
	return v
}

// serviceList answers GET /os-services, filtered by host and binary.
func (a *API) serviceList(q *request) (*reply, error) {
	if err := q.checkQuery("host", "binary"); err != nil {
		return nil, err
	}
	svcs, err := q.services()
	if err != nil {
		return nil, err
	}
	v := q.query()
	views := []any{}
	for _, s := range svcs {
		if (v.Has("host") && s.hostName() != v.Get("host")) || (v.Has("binary") && s.binary != v.Get("binary")) {
			continue
		}
		views = append(views, q.serviceView(s))
	}
	return okReply(map[string]any{"services": views})
}

var (
	serviceActionSchema = &schema{types: tObject, required: []string{"host", "binary"}, props: map[string]*schema{
		"host": {types: tString, minLen: 1, maxLen: 255}, "binary": {types: tString, minLen: 1, maxLen: 255},
		"disabled_reason": {types: tString, minLen: 1, maxLen: 255},
	}}
	serviceForceDownSchema = &schema{types: tObject, required: []string{"host", "binary", "forced_down"}, props: map[string]*schema{
		"host": {types: tString, minLen: 1, maxLen: 255}, "binary": {types: tString, minLen: 1, maxLen: 255},
		"forced_down": booleanSchema,
	}}
	serviceUpdateSchema = &schema{types: tObject, props: map[string]*schema{
		"status":          {types: tString, enum: []string{"enabled", "disabled"}},
		"disabled_reason": {types: tString, minLen: 1, maxLen: 255},
		"forced_down":     booleanSchema,
	}}
)

// computeService finds the nova-compute service of a host; other
// binaries cannot be updated, as in Nova.
func computeService(svcs []*service, match func(*service) bool) (*service, error) {
	for _, s := range svcs {
		if !match(s) {
			continue
		}
		if s.binary != binCompute {
			return nil, badRequest("Updating a %s service is not supported. Only nova-compute services can be updated.", s.binary)
		}
		return s, nil
	}
	return nil, nil
}

// setEnabled enables or disables scheduling onto a host.
func (q *request) setEnabled(h *structs.Host, enabled bool, reason string) (*structs.Host, error) {
	err := q.call("Host.UpdateEnabled", &structs.HostUpdateEnabledRequest{HostID: h.ID, Enabled: enabled, Reason: reason}, &structs.GenericResponse{})
	if err != nil {
		return nil, err
	}
	var out structs.SingleHostResponse
	if err := q.call("Host.Get", &structs.HostSpecificRequest{HostID: h.ID}, &out); err != nil {
		return nil, err
	}
	return out.Host, nil
}

// serviceAction answers the pre-2.53 PUT /os-services/{enable, disable,
// disable-log-reason, force-down} with {host, binary}.
func (a *API) serviceAction(q *request) (*reply, error) {
	action := q.param("action")
	s := serviceActionSchema
	switch action {
	case "enable", "disable", "disable-log-reason":
	case "force-down":
		if !q.atLeast(11) {
			return nil, notFound(msgNotFound)
		}
		s = serviceForceDownSchema
	default:
		return nil, notFound("Unknown action")
	}
	body, err := decodeBody(q, s)
	if err != nil {
		return nil, err
	}
	hostName, binary := body["host"].(string), body["binary"].(string)
	svcs, err := q.services()
	if err != nil {
		return nil, err
	}
	svc, err := computeService(svcs, func(s *service) bool { return s.hostName() == hostName && s.binary == binary })
	if err != nil {
		return nil, err
	}
	if svc == nil {
		return nil, notFound("Compute host %s with binary %s could not be found.", hostName, binary)
	}
	out := map[string]any{"host": hostName, "binary": binary}
	switch action {
	case "force-down":
		forced := boolOf(body["forced_down"])
		if _, err := q.forceDown(svc.host, forced); err != nil {
			return nil, err
		}
		out["forced_down"] = forced
		return okReply(map[string]any{"service": out})
	case "disable-log-reason":
		reason, ok := stringOf(body, "disabled_reason")
		if !ok {
			return nil, badRequest("Missing disabled reason field")
		}
		if _, err := q.setEnabled(svc.host, false, reason); err != nil {
			return nil, err
		}
		out["status"], out["disabled_reason"] = "disabled", reason
	default:
		if _, err := q.setEnabled(svc.host, action == "enable", ""); err != nil {
			return nil, err
		}
		out["status"] = action + "d"
	}
	return okReply(map[string]any{"service": out})
}

// serviceUpdate answers PUT /os-services/{id} (2.53): status with an
// optional disabled_reason. Forcing a service down is not supported:
// liveness comes from gossip and heartbeats.
func (a *API) serviceUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, serviceUpdateSchema)
	if err != nil {
		return nil, err
	}
	status, hasStatus := stringOf(body, "status")
	reason, hasReason := stringOf(body, "disabled_reason")
	forced, hasForced := body["forced_down"]
	if !hasStatus && !hasForced {
		return nil, badRequest("At least one of 'status' or 'forced_down' must be specified.")
	}
	if hasReason && status != "disabled" {
		return nil, badRequest("Specifying a disabled reason is not supported unless disabling the service.")
	}
	id := q.param("id")
	if checkUUID(id) != "" {
		return nil, badRequest("Invalid uuid %s", id)
	}
	svcs, err := q.services()
	if err != nil {
		return nil, err
	}
	svc, err := computeService(svcs, func(s *service) bool { return s.id == id })
	if err != nil {
		return nil, err
	}
	if svc == nil {
		return nil, notFound("Service %s could not be found.", id)
	}
	if hasStatus {
		if svc.host, err = q.setEnabled(svc.host, status == "enabled", reason); err != nil {
			return nil, err
		}
	}
	if hasForced {
		if svc.host, err = q.forceDown(svc.host, boolOf(forced)); err != nil {
			return nil, err
		}
	}
	return okReply(map[string]any{"service": q.serviceView(svc)})
}

// forceDown sets a host's forced_down and returns it as it is then.
func (q *request) forceDown(h *structs.Host, forced bool) (*structs.Host, error) {
	if err := q.call("Host.ForceDown", &structs.HostForceDownRequest{HostID: h.ID, ForcedDown: forced}, &structs.GenericResponse{}); err != nil {
		return nil, err
	}
	var out structs.SingleHostResponse
	if err := q.call("Host.Get", &structs.HostSpecificRequest{HostID: h.ID}, &out); err != nil {
		return nil, err
	}
	return out.Host, nil
}

// serviceDelete answers DELETE /os-services/{id}: a compute service's
// host is removed when it is down and hosts nothing (409 otherwise);
// the servers' own services live as long as their servers.
func (a *API) serviceDelete(q *request) (*reply, error) {
	id := q.param("id")
	if q.atLeast(53) && checkUUID(id) != "" {
		return nil, badRequest("Invalid uuid %s", id)
	}
	svcs, err := q.services()
	if err != nil {
		return nil, err
	}
	var svc *service
	for _, s := range svcs {
		if fmt.Sprint(s.id) == id {
			svc = s
		}
	}
	if svc == nil {
		return nil, notFound("Service %s could not be found.", id)
	}
	if svc.host == nil {
		return nil, faultf(http.StatusConflict, "Service %s is a %s of server %s: it leaves when its server leaves the cluster.", id, svc.binary, svc.hostName())
	}
	if err := q.call("Host.Deregister", &structs.HostDeregisterRequest{HostID: svc.host.ID}, &structs.GenericResponse{}); err != nil {
		if structs.KindOf(err) == structs.KindConflict {
			return nil, faultf(http.StatusConflict, "%s", structs.Message(err))
		}
		return nil, err
	}
	return noContent()
}
