package nova

import (
	"net/http"
	"regexp"

	"github.com/stratus-cloud/stratus/structs"
)

// The server actions that take an image, a host or a zone: rebuild, the
// moves (migrate, os-migrateLive, evacuate) and unshelve.

var (
	// fqdnSchema is Nova's parameter_types.fqdn: a compute host name.
	fqdnSchema = &schema{types: tString, minLen: 1, maxLen: 255, pattern: fqdnPattern}
	// hostOrNullSchema is a host name or null (the scheduler picks).
	hostOrNullSchema = &schema{types: tString | tNull, minLen: 1, maxLen: 255, pattern: fqdnPattern}
	fqdnPattern      = regexp.MustCompile(`^[a-zA-Z0-9-._]*$`)
)

// rebuildSchema is Nova's rebuild action at a microversion.
func rebuildSchema(mv int) *schema {
	props := map[string]*schema{
		"name":               nameSchema,
		"imageRef":           {types: tString},
		"adminPass":          {types: tString},
		"metadata":           metadataSchema,
		"preserve_ephemeral": booleanSchema,
		"OS-DCF:diskConfig":  {types: tString, enum: []string{"AUTO", "MANUAL"}},
		"accessIPv4":         {types: tString, format: checkIPv4},
		"accessIPv6":         {types: tString, format: checkIPv6},
	}
	if mv < 57 {
		props["personality"] = &schema{types: tArray, items: &schema{types: tObject, props: map[string]*schema{
			"path": {types: tString, maxLen: 255}, "contents": {types: tString, format: checkBase64}}}}
	}
	if mv >= 19 {
		props["description"] = descriptionSchema
	}
	if mv >= 54 {
		props["key_name"] = &schema{types: tString | tNull, minLen: 1, maxLen: 255, format: checkName}
	}
	if mv >= 57 {
		props["user_data"] = &schema{types: tString | tNull, maxLen: 65535, format: checkBase64}
	}
	if mv >= 63 {
		props["trusted_image_certificates"] = &schema{types: tArray | tNull, minItems: 1, maxItems: 50,
			items: &schema{types: tString, minLen: 1}}
	}
	if mv >= 90 {
		props["hostname"] = hostnameSchema
	}
	return &schema{types: tObject, required: []string{"imageRef"}, props: props}
}

// rebuildStates are the vm_states a rebuild starts from.
var rebuildStates = []string{structs.VMStateActive, structs.VMStateStopped, structs.VMStateError}

// actRebuild re-images a server on its host and answers 202 with the
// server as Nova does (the full view from 2.75), its admin password and
// a Location. A new name, description and metadata are applied first,
// when the rebuild is allowed, as are a 2.54 key_name (null removes the
// key), a 2.90 hostname and access IPs; trusted certificates are not
// supported by Stratus and are refused with Nova's 501; user_data (2.57)
// replaces the server's; personality and preserve_ephemeral are
// validated and not used.
func actRebuild(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	image, err := imageOf(in)
	if err != nil {
		return nil, err
	}
	if certs, _ := in["trusted_image_certificates"].([]any); len(certs) > 0 {
		return nil, notSupported()
	}
	reimage, err := q.checkVolumeRebuild(inst, image)
	if err != nil {
		return nil, err
	}
	update := structs.InstanceUpdateRequest{InstanceID: inst.ID}
	if v, ok := in["key_name"]; ok {
		if key, _ := v.(string); key != inst.KeyName {
			if key != "" {
				var kp structs.SingleKeyPairResponse
				err := q.call("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: q.token.UserID, Name: key}, &kp)
				if structs.KindOf(err) == structs.KindNotFound {
					return nil, badRequest("Invalid key_name provided.")
				}
				if err != nil {
					return nil, err
				}
			}
			update.KeyName = &key
		}
	}
	if name, ok := stringOf(in, "name"); ok && name != inst.Name {
		update.Name = &name
	}
	if d, ok := in["description"]; ok {
		if desc, _ := d.(string); desc != inst.Description {
			update.Description = &desc
		}
	}
	if h, ok := stringOf(in, "hostname"); ok && h != inst.Hostname {
		update.Hostname = &h
	}
	if m, ok := in["metadata"].(map[string]any); ok {
		update.ReplaceMetadata, update.SetMetadata = true, stringMap(m)
	}
	if _, ok := in["user_data"]; ok && q.atLeast(57) {
		// user_data (2.57) replaces the server's; null removes it.
		ud := decodeUserData(in)
		if ud != inst.UserData {
			update.UserData = &ud
		}
	}
	setAccessIPs(&update, inst, in)
	auto := diskConfigOf(in)
	if err := q.checkRebuildAutoDisk(auto, image); err != nil {
		return nil, err
	}
	if auto != nil && *auto != inst.AutoDiskConfig {
		update.AutoDiskConfig = auto
	}
	// The changes are made only when the rebuild may start, so that a
	// refused rebuild (409) changes nothing; the servers check again.
	rebuildable := inst.Stable() && containsString(rebuildStates, inst.VMState) && (!inst.Locked || q.isAdmin())
	if rebuildable && (update.Name != nil || update.Description != nil || update.ReplaceMetadata || update.Hostname != nil || update.KeyName != nil ||
		update.AccessIPv4 != nil || update.AccessIPv6 != nil || update.AutoDiskConfig != nil || update.UserData != nil) {
		var out structs.InstanceUpdateResponse
		if err := q.call("Instance.Update", &update, &out); err != nil {
			return nil, taskFault(err, inst.ID, "rebuild", structs.OpRebuild)
		}
	}
	out, err := q.runTask(inst, "rebuild", structs.OpRebuild, func(r *structs.InstanceTaskRequest) {
		r.ImageID, r.ReimageBootVolume = image, reimage
	})
	if err != nil {
		return nil, err
	}
	after := out.Instance
	if after == nil {
		if after, err = q.getServer(inst.ID); err != nil {
			return nil, err
		}
	}
	host, err := q.hostOf(after)
	if err != nil {
		return nil, err
	}
	view := q.rebuildView(after, host)
	password, ok := stringOf(in, "adminPass")
	if !ok {
		password = adminPassword()
	}
	view["adminPass"] = password
	if q.atLeast(57) {
		// Nova answers the instance's user data, which the rebuild's
		// user_data replaced when given.
		view["user_data"] = userDataView(after)
	}
	return &reply{status: http.StatusAccepted, header: http.Header{"Location": {q.selfHref("servers", inst.ID)}},
		body: map[string]any{"server": view}}, nil
}

// rebuildView is the server as Nova's rebuild answers it: the update
// view plus key_name (2.54) before 2.75, the full view from 2.75.
func (q *request) rebuildView(inst *structs.Instance, host *structs.Host) map[string]any {
	if q.atLeast(75) {
		s := q.serverView(inst, host, viewOpts{full: true, groups: true})
		// Rebuild shows the top-level user_data instead.
		delete(s, "OS-EXT-SRV-ATTR:user_data")
		return s
	}
	s := q.updateView(inst, host)
	if q.atLeast(54) {
		s["key_name"] = nullString(inst.KeyName)
	}
	return s
}

// migrateSchema is the migrate action from 2.56, which may name a host;
// before it the value is not looked at.
func migrateSchema(mv int) *schema {
	if mv < 56 {
		return nil
	}
	return &schema{types: tObject | tNull, props: map[string]*schema{"host": hostOrNullSchema}}
}

// actMigrate cold-migrates a server (admins only; naming a host is its
// own rule). It ends in VERIFY_RESIZE, like a resize.
func actMigrate(q *request, inst *structs.Instance, arg any) (*reply, error) {
	host := ""
	if o, ok := arg.(map[string]any); ok && q.atLeast(56) {
		host, _ = stringOf(o, "host")
	}
	rule := migrateRule + "migrate"
	if host != "" {
		rule += ":host"
	}
	if !q.isAdmin() {
		return nil, policyFault(rule)
	}
	if _, err := q.runTask(inst, "migrate", structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = host }); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// liveMigrateSchema is os-migrateLive at a microversion: block_migration
// may be "auto" and disk_over_commit is gone from 2.25; force exists
// from 2.30 to 2.67.
func liveMigrateSchema(mv int) *schema {
	block := booleanSchema
	if mv >= 25 {
		block = &schema{types: tBoolean | tString, enum: append(append([]string(nil), boolStrings...), "auto")}
	}
	props := map[string]*schema{"block_migration": block, "host": hostOrNullSchema}
	required := []string{"block_migration", "host"}
	if mv < 25 {
		props["disk_over_commit"] = booleanSchema
		required = []string{"block_migration", "disk_over_commit", "host"}
	}
	if mv >= 30 && mv < 68 {
		props["force"] = booleanSchema
	}
	return &schema{types: tObject, required: required, props: props}
}

// actLiveMigrate moves a running server to another host (admins only).
// Block migration, disk overcommit and force are accepted and not used:
// the servers check the destination and move the guest's storage as its
// driver needs.
func actLiveMigrate(q *request, inst *structs.Instance, arg any) (*reply, error) {
	host, _ := stringOf(arg.(map[string]any), "host")
	if _, err := q.runTask(inst, "os-migrateLive", structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = host }); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// evacuateSchema is the evacuate action at a microversion:
// onSharedStorage is required before 2.14 and gone after; force exists
// from 2.29 to 2.67.
func evacuateSchema(mv int) *schema {
	props := map[string]*schema{"host": fqdnSchema, "adminPass": {types: tString}}
	s := &schema{types: tObject, props: props}
	if mv < 14 {
		props["onSharedStorage"] = booleanSchema
		s.required = []string{"onSharedStorage"}
	}
	if mv >= 29 && mv < 68 {
		props["force"] = booleanSchema
	}
	return s
}

// actEvacuate rebuilds a server of a host that is down on another host
// (admins only). It answers 200, with the admin password before 2.14.
// Before 2.14 the caller says whether the disk is on shared storage
// (the destination fails the evacuation if it finds otherwise); from
// 2.14 the destination finds out, as Nova's compute does.
// The server ends in the power state it had (2.95's "stays stopped" is
// not supported by the servers yet).
func actEvacuate(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	host, _ := stringOf(in, "host")
	password, hasPassword := stringOf(in, "adminPass")
	var onShared *bool
	if !q.atLeast(14) {
		shared := boolOf(in["onSharedStorage"])
		onShared = &shared
		if shared && hasPassword {
			return nil, badRequest("admin password can't be changed on existing disk")
		}
		if !shared && !hasPassword {
			password = adminPassword()
		}
	}
	hosts, err := q.hostsByID()
	if err != nil {
		return nil, err
	}
	if host != "" {
		target := hostNamed(hosts, host)
		if target == nil {
			return nil, notFound("Compute host %s not found.", host)
		}
		if target.ID == inst.HostID {
			return nil, badRequest("The target host can't be the same one.")
		}
	}
	if src := hosts[inst.HostID]; src != nil && src.Up() {
		return nil, badRequest("Compute service of %s is still in use.", src.Name)
	}
	if _, err := q.runTask(inst, "evacuate", structs.OpEvacuate, func(r *structs.InstanceTaskRequest) {
		r.TargetHost, r.OnSharedStorage = host, onShared
	}); err != nil {
		return nil, err
	}
	if q.atLeast(14) {
		return &reply{status: http.StatusOK}, nil
	}
	return okReply(map[string]any{"adminPass": nullString(password)})
}

// hostNamed finds a host by name (or id), nil when there is none.
func hostNamed(hosts map[string]*structs.Host, name string) *structs.Host {
	if h := hosts[name]; h != nil {
		return h
	}
	for _, h := range hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// unshelveSchema is the unshelve action at a microversion: any value
// before 2.77, null or an availability zone from 2.77, and from 2.91 a
// zone (null unpins) and/or a host.
func unshelveSchema(mv int) *schema {
	switch {
	case mv < 77:
		return nil
	case mv < 91:
		return &schema{types: tObject | tNull, required: []string{"availability_zone"},
			props: map[string]*schema{"availability_zone": nameSchema}}
	}
	return &schema{types: tObject | tNull, props: map[string]*schema{
		"availability_zone": {types: tString | tNull}, "host": fqdnSchema}}
}

// checkUnshelve refuses 2.91's empty object ({"unshelve": {}}).
func checkUnshelve(mv int, v any) error {
	if o, ok := v.(map[string]any); ok && mv >= 91 && len(o) == 0 {
		return validationError([]string{"unshelve"}, o, pyRepr(o)+" is not valid under any of the given schemas")
	}
	return nil
}

// actUnshelve brings a shelved server back: on its host when it is still
// there, scheduled again when offloaded. A zone or host (admins, 2.91)
// may be named for an offloaded server only. The scheduler cannot be
// sent to another zone yet, so a zone other than the server's own
// answers 501 unless a host in it is named.
func actUnshelve(q *request, inst *structs.Instance, arg any) (*reply, error) {
	o, _ := arg.(map[string]any)
	var az, host string
	azGiven := false
	if o != nil && q.atLeast(77) {
		if v, ok := o["availability_zone"]; ok {
			azGiven = true
			az, _ = v.(string)
		}
		if q.atLeast(91) {
			host, _ = stringOf(o, "host")
		}
	}
	if host != "" && !q.isAdmin() {
		return nil, policyFault(shelveRule + "unshelve_to_host")
	}
	if (azGiven || host != "") && inst.VMState != structs.VMStateShelvedOffloaded {
		return nil, faultf(http.StatusConflict, "Specifying an availability zone or a host when unshelving server %s with status %s is not supported. The server status must be SHELVED_OFFLOADED.", inst.ID, inst.Status())
	}
	if az != "" || host != "" {
		hosts, err := q.hostsByID()
		if err != nil {
			return nil, err
		}
		if az != "" && !zoneKnown(hosts, az) {
			return nil, badRequest("The requested availability zone is not available")
		}
		if host != "" {
			h := hostNamed(hosts, host)
			if h == nil {
				return nil, badRequest("Compute host %s could not be found.", host)
			}
			if az != "" && hostZone(h) != az {
				// Nova's UnshelveHostNotInAZ, a conflict.
				return nil, faultf(http.StatusConflict, "Host \"%s\" is not in the availability zone \"%s\".", host, az)
			}
		} else if az != inst.AZ {
			return nil, notSupported()
		}
	}
	if _, err := q.runTask(inst, "unshelve", structs.OpUnshelve, func(r *structs.InstanceTaskRequest) { r.TargetHost = host }); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// zoneKnown reports whether some host is in the zone.
func zoneKnown(hosts map[string]*structs.Host, az string) bool {
	for _, h := range hosts {
		if hostZone(h) == az {
			return true
		}
	}
	return false
}
