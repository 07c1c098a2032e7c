package server

import (
	"reflect"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// What a non-admin user's call is confined to, and what a node secret
// may reach: the per-method checks the rule table (rpc_policy.go)
// names. They run in the RPC hook, before the endpoint.

// bindCaller confines a non-admin's request to the token: no admin
// flags (Admin, ImageAdmin, Caller.Admin), the Caller's project and
// user are the token's, and so are ProjectID and UserID where the rule
// says so. An empty field is set to the token's value; another value is
// refused.
func bindCaller(method string, rule rpcRule, subj *policy.Subject, args any) error {
	v := reflect.ValueOf(args)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	for _, name := range []string{"Admin", "ImageAdmin"} {
		if f := v.FieldByName(name); f.IsValid() && f.Kind() == reflect.Bool && f.Bool() {
			return structs.Errorf(structs.KindPermission, "%s: only an admin may act as one", method)
		}
	}
	if c := v.FieldByName("Caller"); c.IsValid() && c.Kind() == reflect.Struct {
		if f := c.FieldByName("Admin"); f.IsValid() && f.Kind() == reflect.Bool && f.Bool() {
			return structs.Errorf(structs.KindPermission, "%s: only an admin may act as one", method)
		}
		if err := bindField(method, c, "ProjectID", subj.ProjectID, "project"); err != nil {
			return err
		}
		if err := bindField(method, c, "UserID", subj.UserID, "user"); err != nil {
			return err
		}
	}
	if rule.ownProject {
		if err := bindField(method, v, "ProjectID", subj.ProjectID, "project"); err != nil {
			return err
		}
	}
	if rule.ownUser {
		if err := bindField(method, v, "UserID", subj.UserID, "user"); err != nil {
			return err
		}
	}
	return nil
}

// bindField sets an empty string field to want, and refuses another
// value.
func bindField(method string, v reflect.Value, name, want, what string) error {
	f := v.FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.String {
		return nil
	}
	switch f.String() {
	case want:
		return nil
	case "":
		if f.CanSet() {
			f.SetString(want)
		}
		return nil
	}
	return structs.Errorf(structs.KindPermission, "%s: a token of %s %s cannot act for %s %s", method, what, want, what, f.String())
}

// instanceIDsOf is what a request's InstanceID and InstanceIDs name.
func instanceIDsOf(args any) []string {
	v := reflect.ValueOf(args)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	var ids []string
	if f := v.FieldByName("InstanceID"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
		ids = append(ids, f.String())
	}
	if f := v.FieldByName("InstanceIDs"); f.IsValid() && f.Kind() == reflect.Slice {
		if l, ok := f.Interface().([]string); ok {
			ids = append(ids, l...)
		}
	}
	return ids
}

// checkOwnInstances answers not found, as if they did not exist, for
// another project's instances a non-admin's request names. Unknown ones
// pass: the endpoint answers them.
func (s *Server) checkOwnInstances(subj *policy.Subject, args any) error {
	state := s.fsm.State()
	for _, id := range instanceIDsOf(args) {
		inst, err := state.InstanceByID(nil, id)
		if err != nil {
			return err
		}
		if inst != nil && inst.ProjectID != subj.ProjectID {
			return structs.Errorf(structs.KindNotFound, "instance %s not found", id)
		}
	}
	return nil
}

// checkInstanceCreate refuses a target host to non-admins (Nova's
// "az:host" is an admin's).
func checkInstanceCreate(_ *Server, _ *rpcCredential, args any) error {
	if req, ok := args.(*structs.InstanceCreateRequest); ok && req.TargetHost != "" {
		return structs.Errorf(structs.KindPermission, "Instance.Create: only an admin may choose the host")
	}
	return nil
}

// checkIdentityList: without the admin role, a token reads its own user
// and its own projects; the public signing keys and revocations are
// anyone's.
func checkIdentityList(_ *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.IdentityListRequest)
	if !ok {
		return nil
	}
	self := c.subject.UserID
	if publicIdentityList(args) {
		return nil
	}
	switch req.Kind {
	case structs.IdentityKindUsers:
		if req.ID == self {
			return nil
		}
	case structs.IdentityKindProjects:
		if req.UserID == self {
			return nil
		}
	}
	return structs.Errorf(structs.KindPermission, "Identity.List of %s needs the admin role", req.Kind)
}

// publicIdentityList: the signing keys' public halves and the
// revocations are anyone's (agents verify tokens with them).
func publicIdentityList(args any) bool {
	req, ok := args.(*structs.IdentityListRequest)
	return ok && (req.Kind == structs.IdentityKindSigningKeys || req.Kind == structs.IdentityKindRevoked)
}

// checkIdentityUpsert: without the admin role, a token may only store
// its own user record unchanged but for a new password.
func checkIdentityUpsert(s *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.IdentityUpsertRequest)
	refuse := structs.Errorf(structs.KindPermission, "Identity.Upsert needs the admin role (a user may only change its own password)")
	if !ok || len(req.Projects)+len(req.Roles)+len(req.Assignments) > 0 || len(req.Users) != 1 || req.Users[0] == nil {
		return refuse
	}
	u := req.Users[0]
	if u.ID != c.subject.UserID || len(req.Passwords) != 1 || req.Passwords[u.ID] == "" {
		return refuse
	}
	cur, err := s.fsm.State().UserByID(nil, u.ID)
	if err != nil {
		return err
	}
	if cur == nil || cur.Name != u.Name || cur.DomainID != u.DomainID || cur.Enabled != u.Enabled ||
		cur.DefaultProjectID != u.DefaultProjectID {
		return refuse
	}
	return nil
}

// checkTokenRevoke: without the admin role, a token revokes itself or
// another token of its user (given in the request), as Keystone lets
// a user; a service (the service role) revokes any.
func checkTokenRevoke(s *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.TokenRevokeRequest)
	switch {
	case !ok || req.AuditID == "":
	case req.AuditID == c.claims.AuditID, c.subject.HasRole("service"):
		return nil
	case req.Token != "":
		if t, err := s.VerifyToken(req.Token); err == nil && t.AuditID == req.AuditID && t.UserID == c.claims.UserID {
			return nil
		}
	}
	return structs.Errorf(structs.KindPermission, "Identity.RevokeToken: only an admin may revoke another user's token")
}

// checkKeyPairCreate: a key pair is created for the caller itself.
func checkKeyPairCreate(_ *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.KeyPairCreateRequest)
	if !ok || req.KeyPair == nil {
		return nil
	}
	switch req.KeyPair.UserID {
	case c.subject.UserID:
	case "":
		req.KeyPair.UserID = c.subject.UserID
	default:
		return structs.Errorf(structs.KindPermission, "KeyPair.Create: only an admin may create another user's key pair")
	}
	return nil
}

// checkMigrationList: a non-admin lists the migrations of one of its
// instances (ownInstances checked the instance).
func checkMigrationList(_ *Server, _ *rpcCredential, args any) error {
	if req, ok := args.(*structs.MigrationListRequest); ok && req.InstanceID != "" {
		return nil
	}
	return structs.Errorf(structs.KindPermission, "Migration.List of every instance needs the admin role")
}

// checkServerGroupCreate: a server group is created in the caller's
// project.
func checkServerGroupCreate(_ *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.ServerGroupCreateRequest)
	if !ok || req.Group == nil {
		return nil
	}
	switch req.Group.ProjectID {
	case c.subject.ProjectID:
	case "":
		req.Group.ProjectID = c.subject.ProjectID
	default:
		return structs.Errorf(structs.KindPermission, "ServerGroup.Create: only an admin may create in another project")
	}
	return nil
}

// checkServerGroupOwn hides other projects' server groups.
func checkServerGroupOwn(s *Server, c *rpcCredential, args any) error {
	var id string
	switch req := args.(type) {
	case *structs.ServerGroupSpecificRequest:
		id = req.GroupID
	case *structs.ServerGroupDeleteRequest:
		id = req.GroupID
	}
	g, err := s.fsm.State().ServerGroupByID(nil, id)
	if err != nil {
		return err
	}
	if g != nil && g.ProjectID != c.subject.ProjectID {
		return structs.Errorf(structs.KindNotFound, "server group %s not found", id)
	}
	return nil
}

// checkImageCreate: an image is created (or imported from an object,
// whose bucket the bound Caller must reach) owned by the caller's
// project.
func checkImageCreate(_ *Server, c *rpcCredential, args any) error {
	var img *structs.Image
	switch req := args.(type) {
	case *structs.ImageCreateRequest:
		img = req.Image
	case *structs.S3ImageImportRequest:
		img = req.Image
	}
	if img == nil {
		return nil
	}
	switch img.Owner {
	case c.subject.ProjectID:
	case "":
		img.Owner = c.subject.ProjectID
	default:
		return structs.Errorf(structs.KindPermission, "only an admin may create an image of another project")
	}
	return nil
}

// checkImageModify: a non-admin changes or deletes its project's images.
func checkImageModify(s *Server, c *rpcCredential, args any) error {
	var id string
	switch req := args.(type) {
	case *structs.ImageUpdateRequest:
		if req.Image != nil {
			id = req.Image.ID
		}
	case *structs.ImageDeleteRequest:
		id = req.ImageID
	}
	img, err := s.fsm.State().ImageByID(nil, id)
	if err != nil || img == nil {
		return err
	}
	if !img.ModifiableBy(structs.ImageAccess{ProjectID: c.subject.ProjectID}) {
		return structs.Errorf(structs.KindPermission, "image %s belongs to another project", id)
	}
	if req, ok := args.(*structs.ImageUpdateRequest); ok && req.Image.Owner != img.Owner {
		return structs.Errorf(structs.KindPermission, "only an admin may give an image to another project")
	}
	return nil
}

// checkImageMember: the image's owner shares it (creates, deletes
// memberships); the member project sets its own membership's status.
func checkImageMember(s *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.ImageMemberRequest)
	if !ok || req.Entry == nil || req.Entry.Member == nil {
		return nil
	}
	m := req.Entry.Member
	img, err := s.fsm.State().ImageByID(nil, m.ImageID)
	if err != nil || img == nil {
		return err
	}
	if img.ModifiableBy(structs.ImageAccess{ProjectID: c.subject.ProjectID}) {
		return nil
	}
	if !req.Entry.Create && !req.Entry.Delete && m.MemberID == c.subject.ProjectID {
		return nil
	}
	return structs.Errorf(structs.KindPermission, "image %s: only its owner shares it, and a member sets its own status", m.ImageID)
}

// nodeInstanceArgs: the instances a node call names are on the agent's
// hosts (placed there, or moving there).
func nodeInstanceArgs(s *Server, hosts map[string]bool, args any) error {
	for _, id := range instanceIDsOf(args) {
		if err := s.nodeOwnsInstance(hosts, id); err != nil {
			return err
		}
	}
	return nil
}

// nodeOwnsInstance checks that an instance is on one of hosts: its host,
// its move's target, or one of its allocations'. An unknown instance
// passes (the endpoint answers not found).
func (s *Server) nodeOwnsInstance(hosts map[string]bool, id string) error {
	state := s.fsm.State()
	inst, err := state.InstanceByID(nil, id)
	if err != nil || inst == nil {
		return err
	}
	if hosts[inst.HostID] || hosts[inst.TargetHostID] {
		return nil
	}
	allocs, err := state.AllocationsByInstance(nil, id)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if hosts[a.HostID] {
			return nil
		}
	}
	return structs.Errorf(structs.KindPermission, "instance %s is not on this agent's hosts", id)
}

// nodeKeyPairGet: an agent reads the key pair of an instance it hosts
// (the metadata service): some instance on its hosts has that owner
// and key name.
func nodeKeyPairGet(s *Server, hosts map[string]bool, args any) error {
	req, ok := args.(*structs.KeyPairSpecificRequest)
	if !ok {
		return nil
	}
	state := s.fsm.State()
	for id := range hosts {
		insts, err := state.InstancesByHost(nil, id)
		if err != nil {
			return err
		}
		for _, inst := range insts {
			if inst.UserID == req.UserID && inst.KeyName == req.Name {
				return nil
			}
		}
	}
	return structs.Errorf(structs.KindPermission, "key pair %s is not that of an instance on this agent's hosts", req.Name)
}

// nodeNetList: an agent lists its own hosts' ports, the ports of the
// instances it hosts, and the objects they use (read-only).
func nodeNetList(s *Server, hosts map[string]bool, args any) error {
	req, ok := args.(*structs.NetListRequest)
	if !ok {
		return nil
	}
	if req.HostID != "" && !hosts[req.HostID] {
		return structs.Errorf(structs.KindPermission, "host %s is not this agent's", req.HostID)
	}
	for _, id := range req.DeviceIDs {
		if err := s.nodeOwnsInstance(hosts, id); err != nil {
			return err
		}
	}
	return nil
}

// nodeHostArg: a call that names a host names one of the agent's.
func nodeHostArg(_ *Server, hosts map[string]bool, args any) error {
	v := reflect.ValueOf(args)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("HostID")
	if !f.IsValid() || f.Kind() != reflect.String || f.String() == "" {
		return structs.Errorf(structs.KindPermission, "a node secret reads only its own hosts': name one")
	}
	if !hosts[f.String()] {
		return structs.Errorf(structs.KindPermission, "host %s is not this agent's", f.String())
	}
	return nil
}

// nodeImageDelete: an agent deletes the images of snapshots and
// backups of instances on its hosts (a failed snapshot, backup
// rotation), and the image a volume on its hosts is uploading into (a
// failed upload).
func nodeImageDelete(s *Server, hosts map[string]bool, args any) error {
	req, ok := args.(*structs.ImageDeleteRequest)
	if !ok {
		return nil
	}
	img, err := s.fsm.State().ImageByID(nil, req.ImageID)
	if err != nil || img == nil {
		return err
	}
	id := img.Properties[structs.ImagePropInstanceID]
	if id != "" {
		if inst, err := s.fsm.State().InstanceByID(nil, id); err != nil || inst != nil {
			if err != nil {
				return err
			}
			return s.nodeOwnsInstance(hosts, id)
		}
	}
	if up, err := nodeUploadsTo(s, hosts, img.ID); up || err != nil {
		return err
	}
	return structs.Errorf(structs.KindPermission, "image %s is not a snapshot of an instance on this agent's hosts", req.ImageID)
}

// hostDirectory trims Host.Get and Host.List replies for a node secret:
// its own hosts whole, the others reduced to the directory an agent
// needs (name, zone, status, its agent) — no inventories, usage,
// addresses, attributes or drain. Records are copied, never changed:
// in-process replies share them with the state store.
func hostDirectory(hosts map[string]bool) rpc.ReplyFilter {
	view := func(h *structs.Host) *structs.Host {
		if h == nil || hosts[h.ID] {
			return h
		}
		return &structs.Host{ID: h.ID, Name: h.Name, Region: h.Region, AZ: h.AZ, Status: h.Status,
			Enabled: h.Enabled, ForcedDown: h.ForcedDown, GossipMember: h.GossipMember,
			CreateIndex: h.CreateIndex, ModifyIndex: h.ModifyIndex}
	}
	return func(reply any) {
		switch r := reply.(type) {
		case *structs.SingleHostResponse:
			r.Host = view(r.Host)
		case *structs.HostListResponse:
			out := make([]*structs.Host, len(r.Hosts))
			for i, h := range r.Hosts {
				out[i] = view(h)
			}
			r.Hosts = out
		}
	}
}

// checkVolumeResetStatus keeps os-reset_status, which sets any status,
// and os-force_delete, which deletes from any status, to admins (the
// hook runs it for non-admins only).
func checkVolumeResetStatus(_ *Server, _ *rpcCredential, args any) error {
	reset := ""
	switch req := args.(type) {
	case *structs.VolumeUpdateRequest:
		reset = req.ResetStatus
	case *structs.VolumeSnapshotUpdateRequest:
		reset = req.ResetStatus
	case *structs.VolumeDeleteRequest:
		if req.Force {
			return structs.Errorf(structs.KindPermission, "Policy doesn't allow volume_extension:volume_admin_actions:force_delete to be performed.")
		}
	}
	if reset != "" {
		return structs.Errorf(structs.KindPermission, "Policy doesn't allow os-reset_status to be performed.")
	}
	return nil
}
