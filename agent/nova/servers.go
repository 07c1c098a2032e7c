package nova

import (
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/http"
	"regexp"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const serverRule = "os_compute_api:servers:"

func (a *API) serverRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers", Access: reader, Policy: serverRule + "index", Handle: a.serverList},
		{Pattern: "GET /servers/detail", Access: reader, Policy: serverRule + "detail", Handle: a.serverDetail},
		{Pattern: "POST /servers", Access: member, Policy: serverRule + "create", Handle: a.serverCreate},
		{Pattern: "GET /servers/{id}", Access: reader, Policy: serverRule + "show", Handle: a.serverShow},
		{Pattern: "PUT /servers/{id}", Access: member, Policy: serverRule + "update", Handle: a.serverUpdate},
		{Pattern: "DELETE /servers/{id}", Access: member, Policy: serverRule + "delete", Handle: a.serverDelete},
	}
}

// getServer reads a server the caller may see: another project's server
// is not found, as Nova's project-scoped database queries make it.
func (q *request) getServer(id string) (*structs.Instance, error) {
	var out structs.SingleInstanceResponse
	err := q.call("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &out)
	if err == nil && !q.isAdmin() && out.Instance.ProjectID != q.token.ProjectID {
		err = structs.Errorf(structs.KindNotFound, "instance %q not found", id)
	}
	if err != nil {
		return nil, notFoundAs(err, "Instance %s could not be found.", id)
	}
	return out.Instance, nil
}

// hostOf reads a server's host; nil when unplaced or gone.
func (q *request) hostOf(inst *structs.Instance) (*structs.Host, error) {
	if inst.HostID == "" {
		return nil, nil
	}
	var out structs.SingleHostResponse
	err := q.call("Host.Get", &structs.HostSpecificRequest{HostID: inst.HostID}, &out)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, nil
	}
	return q.zoned(out.Host, err)
}

// hostsByID reads every host, keyed by id.
func (q *request) hostsByID() (map[string]*structs.Host, error) {
	var out structs.HostListResponse
	if err := q.call("Host.List", &structs.HostListRequest{}, &out); err != nil {
		return nil, err
	}
	hosts, err := q.withZones(out.Hosts...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*structs.Host, len(hosts))
	for _, h := range hosts {
		m[h.ID] = h
	}
	return m, nil
}

// showServer answers with the full server view (GET, and PUT from 2.75).
func (q *request) showServer(inst *structs.Instance) (*reply, error) {
	host, err := q.hostOf(inst)
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"server": q.serverView(inst, host, viewOpts{full: true, groups: true})})
}

func (a *API) serverShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	return q.showServer(inst)
}

// serverDelete answers DELETE /servers/{id}: 204, the deletion going on
// in the background. With reclaim_instance_interval configured on the
// servers the delete is soft (SOFT_DELETED, restorable until reclaimed).
func (a *API) serverDelete(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if err := q.deleteServer(inst, false); err != nil {
		return nil, err
	}
	return noContent()
}

// deleteServer deletes a server on the caller's behalf (a locked one is
// Nova's 409 for non-admins); force deletes at once even when deletes
// are soft, and deletes a soft-deleted server (forceDelete).
func (q *request) deleteServer(inst *structs.Instance, force bool) error {
	args := &structs.InstanceDeleteRequest{InstanceIDs: []string{inst.ID}, Force: force, ProjectID: q.token.ProjectID,
		UserID: q.token.UserID, Admin: q.isAdmin(), RequestID: q.id}
	// Safe to send again across an election; "not found" after an
	// attempt that may have gone through means it did.
	err := retry.DoFor(q.r.Context(), q.api.writeRetry, func(retried bool) error {
		args.Forwarded = false // an in-process attempt may have set it
		err := q.call("Instance.Delete", args, &structs.GenericResponse{})
		if retried && structs.KindOf(err) == structs.KindNotFound {
			return nil
		}
		return err
	})
	if err != nil {
		action := "delete"
		if force {
			action = "forceDelete"
		}
		return taskFault(err, inst.ID, action, action)
	}
	return nil
}

func serverUpdateSchema(mv int) *schema {
	props := map[string]*schema{
		"name":              nameSchema,
		"OS-DCF:diskConfig": {types: tString, enum: []string{"AUTO", "MANUAL"}},
		"accessIPv4":        {types: tString, format: checkIPv4},
		"accessIPv6":        {types: tString, format: checkIPv6},
	}
	if mv >= 19 {
		props["description"] = descriptionSchema
	}
	if mv >= 90 {
		props["hostname"] = hostnameSchema
	}
	return &schema{types: tObject, required: []string{"server"}, props: map[string]*schema{
		"server": {types: tObject, props: props},
	}}
}

// serverUpdate answers PUT /servers/{id}: name, description, access
// IPs (access_ips.go) and (2.90) hostname change.
func (a *API) serverUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, serverUpdateSchema(q.mv))
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	in := object(body, "server")
	args := structs.InstanceUpdateRequest{InstanceID: inst.ID}
	args.AccessIPv4, args.AccessIPv6 = accessIPsOf(in)
	args.AutoDiskConfig = diskConfigOf(in)
	if h, ok := stringOf(in, "hostname"); ok {
		args.Hostname = &h
	}
	if name, ok := stringOf(in, "name"); ok {
		args.Name = &name
	}
	if d, ok := in["description"]; ok {
		desc, _ := d.(string)
		args.Description = &desc
	}
	if args.Name != nil || args.Description != nil || args.Hostname != nil || args.AccessIPv4 != nil || args.AccessIPv6 != nil ||
		args.AutoDiskConfig != nil {
		var out structs.InstanceUpdateResponse
		if err := q.call("Instance.Update", &args, &out); err != nil {
			return nil, notFoundAs(err, "Instance %s could not be found.", inst.ID)
		}
		inst = out.Instance
	}
	if q.atLeast(75) {
		return q.showServer(inst)
	}
	host, err := q.hostOf(inst)
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"server": q.updateView(inst, host)})
}

// updateView is the server as Nova's update and rebuild answer it before
// 2.75: the basic view, with addresses not extended (no OS-EXT-IPS:type
// or OS-EXT-IPS-MAC:mac_addr), as GET /servers/{id}/ips shows them.
func (q *request) updateView(inst *structs.Instance, host *structs.Host) map[string]any {
	s := q.serverView(inst, host, viewOpts{groups: true})
	s["addresses"] = q.ipsOf(inst)
	return s
}

var (
	hostnameSchema = &schema{types: tString, minLen: 2, maxLen: 255, pattern: regexp.MustCompile(`^[a-zA-Z0-9]+[a-zA-Z0-9-._]*[a-zA-Z0-9]+$`)}
	tagPattern     = regexp.MustCompile(`^[^,/]*$`)
)

func checkIPv4(s string) string {
	if ip := net.ParseIP(s); ip == nil || ip.To4() == nil || strings.Contains(s, ":") {
		return pyRepr(s) + " is not a 'ipv4'"
	}
	return ""
}

func checkIPv6(s string) string {
	if ip := net.ParseIP(s); ip == nil || !strings.Contains(s, ":") {
		return pyRepr(s) + " is not a 'ipv6'"
	}
	return ""
}

// checkBase64 is Nova's "base64" format: Python's lenient decoder, which
// skips characters outside the alphabet (line breaks, spaces).
func checkBase64(s string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=' {
			return r
		}
		return -1
	}, s)
	if _, err := base64.StdEncoding.DecodeString(clean); err != nil {
		return pyRepr(s) + " is not a 'base64'"
	}
	return ""
}

// lastSegment reduces a reference that may be a link
// (".../flavors/1") to its id, as Nova accepts both.
func lastSegment(ref string) string {
	if i := strings.LastIndex(ref, "/"); i >= 0 && strings.Contains(ref, "://") {
		return ref[i+1:]
	}
	return ref
}

// adminPassword is a random password of Nova's default length, from
// characters that cannot be confused with one another.
func adminPassword() string {
	const chars = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	buf := make([]byte, 12)
	_, _ = rand.Read(buf)
	for i, b := range buf {
		buf[i] = chars[int(b)%len(chars)]
	}
	return string(buf)
}

// createdReply is POST /servers's answer: the first server's id, links
// and admin password, or the reservation id when asked for.
func (q *request) createdReply(inst *structs.Instance, password string, groups []any, reservation bool) (*reply, error) {
	if reservation {
		return acceptedReply(map[string]any{"reservation_id": inst.ReservationID})
	}
	if len(groups) == 0 {
		groups = []any{map[string]any{"name": "default"}}
	}
	rep := &reply{status: http.StatusAccepted, header: http.Header{"Location": {q.selfHref("servers", inst.ID)}},
		body: &createdServerBody{Server: createdServer{
			ID: inst.ID, Links: q.links("servers", inst.ID), DiskConfig: diskConfigView(inst),
			AdminPass: password, SecurityGroups: groups,
		}}}
	return rep, nil
}

// createdServerBody is POST /servers's answer. Its fields are in the
// order of their JSON names, so that it encodes exactly as the map it
// replaces (encoding/json sorts a map's keys) without sorting them on
// every boot.
type createdServerBody struct {
	Server createdServer `json:"server"`
}

// createdServer is the server in POST /servers's answer.
type createdServer struct {
	DiskConfig     string `json:"OS-DCF:diskConfig"`
	AdminPass      string `json:"adminPass"`
	ID             string `json:"id"`
	Links          []link `json:"links"`
	SecurityGroups []any  `json:"security_groups"`
}

// countOf reads min_count or max_count, 1 when absent.
func countOf(in map[string]any, k string) int {
	if v, ok := in[k]; ok {
		return int(intOf(v))
	}
	return 1
}

// parseCounts applies Nova's multi-create rules: max_count defaults to
// min_count, and min_count may not exceed it. Stratus creates max_count
// (quotas are not enforced yet, so there is never a reason for fewer).
func parseCounts(in map[string]any) (int, error) {
	minCount, maxCount := countOf(in, "min_count"), countOf(in, "max_count")
	if _, ok := in["max_count"]; !ok {
		maxCount = minCount
	}
	if minCount > maxCount {
		return 0, badRequest("min_count must be <= max_count")
	}
	return maxCount, nil
}
