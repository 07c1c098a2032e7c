package nova

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/stratus-cloud/stratus/structs"
)

// defaultZone is Nova's default_availability_zone, shown for hosts that
// have none.
const defaultZone = "nova"

// viewOpts picks the parts of Nova's server view a response carries.
type viewOpts struct {
	// full adds what GET shows beyond PUT's answer before 2.75: zone,
	// key, usage, extended status and attributes, host status.
	full bool
	// groups adds server_groups (2.71, show and update only).
	groups bool
}

// progressStatuses and faultStatuses are the statuses for which Nova
// shows progress and fault.
var (
	progressStatuses = []string{"ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING"}
	faultStatuses    = []string{"ERROR", "DELETED"}
)

// serverView is an instance in Nova's server body, shaped for the
// request's microversion and the caller's role. host is the instance's
// host, nil when it has none or it is gone.
func (q *request) serverView(inst *structs.Instance, host *structs.Host, opts viewOpts) map[string]any {
	status := inst.Status()
	s := map[string]any{
		"id":                inst.ID,
		"name":              inst.Name,
		"status":            status,
		"tenant_id":         inst.ProjectID,
		"user_id":           inst.UserID,
		"metadata":          metadataOf(inst),
		"hostId":            hostID(inst, host),
		"image":             q.serverImage(inst),
		"flavor":            q.serverFlavor(inst),
		"created":           isoTime(inst.CreatedAt),
		"updated":           isoTime(inst.UpdatedAt),
		"addresses":         q.addressesOf(inst),
		"accessIPv4":        inst.AccessIPv4,
		"accessIPv6":        inst.AccessIPv6,
		"links":             q.links("servers", inst.ID),
		"OS-DCF:diskConfig": diskConfigView(inst),
	}
	if containsString(faultStatuses, status) && inst.Fault != nil {
		s["fault"] = q.faultView(inst.Fault)
	}
	if containsString(progressStatuses, status) {
		s["progress"] = 0
	}
	if opts.full {
		q.addFullView(s, inst, host)
		if groups := q.securityGroupsOf(inst); groups != nil {
			s["security_groups"] = groups
		}
	}
	if q.atLeast(9) {
		s["locked"] = inst.Locked
	}
	if q.atLeast(73) {
		s["locked_reason"] = nullString(inst.LockedReason)
	}
	if q.atLeast(19) {
		s["description"] = nullString(inst.Description)
	}
	if q.atLeast(26) {
		s["tags"] = tagsOf(inst)
	}
	if q.atLeast(63) {
		s["trusted_image_certificates"] = nil
	}
	if q.atLeast(90) {
		s["OS-EXT-SRV-ATTR:hostname"] = guestHostname(inst)
	}
	if opts.groups && q.atLeast(71) {
		s["server_groups"] = serverGroupsOf(inst)
	}
	if q.atLeast(96) {
		s["pinned_availability_zone"] = nullString(inst.AZ)
	}
	if q.atLeast(100) {
		s["scheduler_hints"] = schedulerHintsView(inst.Hints)
	}
	return s
}

// addFullView adds what Nova's show and detail carry beyond the basics.
func (q *request) addFullView(s map[string]any, inst *structs.Instance, host *structs.Host) {
	s["OS-EXT-AZ:availability_zone"] = zoneOf(inst, host)
	s["config_drive"] = configDriveView(inst)
	s["key_name"] = nullString(inst.KeyName)
	s["OS-SRV-USG:launched_at"] = pyTime(inst.LaunchedAt)
	s["OS-SRV-USG:terminated_at"] = pyTime(inst.TerminatedAt)
	s["OS-EXT-STS:vm_state"] = inst.VMState
	s["OS-EXT-STS:task_state"] = nullString(inst.TaskState)
	s["OS-EXT-STS:power_state"] = inst.PowerState
	s["os-extended-volumes:volumes_attached"] = q.volumesAttachedView(inst)
	if q.isAdmin() {
		var hostName any
		if host != nil {
			hostName = host.Name
		}
		s["OS-EXT-SRV-ATTR:host"] = hostName
		s["OS-EXT-SRV-ATTR:hypervisor_hostname"] = hostName
		s["OS-EXT-SRV-ATTR:instance_name"] = "instance-" + inst.ID
		if q.atLeast(3) {
			s["OS-EXT-SRV-ATTR:reservation_id"] = inst.ReservationID
			s["OS-EXT-SRV-ATTR:launch_index"] = inst.LaunchIndex
			s["OS-EXT-SRV-ATTR:hostname"] = guestHostname(inst)
			s["OS-EXT-SRV-ATTR:kernel_id"] = inst.ImageProperties["kernel_id"]
			s["OS-EXT-SRV-ATTR:ramdisk_id"] = inst.ImageProperties["ramdisk_id"]
			s["OS-EXT-SRV-ATTR:root_device_name"] = rootDeviceName(inst)
			s["OS-EXT-SRV-ATTR:user_data"] = userDataView(inst)
		}
		if q.atLeast(16) {
			s["host_status"] = hostStatus(inst, host)
		}
	}
}

// faultView is an ERROR server's fault; details are for admins, or for
// anyone when the fault is not a 500.
func (q *request) faultView(f *structs.Fault) map[string]any {
	v := map[string]any{"code": f.Code, "created": isoTime(f.CreatedAt), "message": f.Message}
	if f.Details != "" && (q.isAdmin() || f.Code != 500) {
		v["details"] = f.Details
	}
	return v
}

// serverFlavor is the flavor of a server: a link to it before 2.47, the
// snapshot taken at create time from 2.47.
func (q *request) serverFlavor(inst *structs.Instance) map[string]any {
	if !q.atLeast(47) || inst.Flavor == nil {
		return map[string]any{"id": inst.FlavorID, "links": []link{{Href: q.bookmarkHref("flavors", inst.FlavorID), Rel: "bookmark"}}}
	}
	f := inst.Flavor
	v := map[string]any{"original_name": f.Name, "vcpus": f.VCPUs, "ram": f.MemoryMB, "disk": f.RootGB,
		"ephemeral": f.EphemeralGB, "swap": f.SwapMB}
	if q.isReader() {
		v["extra_specs"] = extraSpecs(f)
	}
	return v
}

// imageRef is a server's image: its id and a bookmark, or "" for none.
func (q *request) imageRef(id string) any {
	if id == "" {
		return ""
	}
	return map[string]any{"id": id, "links": []link{{Href: q.bookmarkHref("images", id), Rel: "bookmark"}}}
}

func metadataOf(inst *structs.Instance) map[string]string {
	if inst.Metadata == nil {
		return map[string]string{}
	}
	return inst.Metadata
}

// hostID is Nova's opaque hostId: sha224 of the project and host name,
// so a project can tell its servers apart by host without learning it.
func hostID(inst *structs.Instance, host *structs.Host) string {
	if inst.HostID == "" {
		return ""
	}
	name := inst.HostID
	if host != nil {
		name = host.Name
	}
	return generateHostID(inst.ProjectID, name)
}

// generateHostID is Nova's utils.generate_hostid: sha224 of the project
// and the host name.
func generateHostID(project, hostName string) string {
	sum := sha256.Sum224([]byte(project + hostName))
	return hex.EncodeToString(sum[:])
}

// zoneOf is the server's availability zone: its host's once placed, the
// requested one before.
func zoneOf(inst *structs.Instance, host *structs.Host) string {
	if host != nil {
		return hostZone(host)
	}
	return inst.AZ
}

func hostZone(h *structs.Host) string {
	if h.AZ == "" {
		return defaultZone
	}
	return h.AZ
}

// hostStatus is Nova's host_status (2.16): UP, MAINTENANCE when
// disabled, UNKNOWN when not reporting, "" without a host.
func hostStatus(inst *structs.Instance, host *structs.Host) string {
	switch {
	case inst.HostID == "" || host == nil:
		return ""
	case !host.Enabled:
		return "MAINTENANCE"
	case host.Up():
		return "UP"
	}
	return "UNKNOWN"
}

// rootDeviceName is Nova's root_device_name: null until a host has
// built the instance, then the libvirt driver's first virtio disk.
func rootDeviceName(inst *structs.Instance) any {
	if inst.HostID == "" && inst.LaunchedAt == 0 {
		return nil
	}
	return "/dev/vda"
}
