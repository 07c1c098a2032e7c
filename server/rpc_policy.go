package server

import (
	"strings"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/rpc"
)

// RPC authorisation: one rule per RPC method, reviewed here in one
// place and enforced by one hook (rpc_policy_auth.go) before any
// endpoint runs, on every server a call reaches — the first one and,
// after forwarding, the leader. With ACLs off (dev mode, acl { enabled
// = false }) the hook lets everything through.
//
// A call's credential is its AuthToken, one of:
//   - a user token (authtoken "v2.…"), verified with Server.VerifyToken:
//     signature, expiry, revocation; its roles must reach the rule's
//     level (policy.Access), and a non-admin's call is confined to its
//     own project (and user, where the rule says so);
//   - a node secret, the agent's (node_auth.go); a rule admits it only
//     for what agents need: the node endpoints, which check it against
//     the hosts they name, and a few reads limited to the agent's own
//     hosts;
//   - a server credential, a token a server signs for itself with the
//     cluster's signing key (only servers hold it): servers' calls to
//     themselves and to the leader. It passes every rule.
//
// A method without a rule admits no one but servers; a test fails when
// a registered method has none (rpc_policy_test.go), and another keeps
// the table in website/policy.md.

// nodeAccess says what a node secret may do with a method.
type nodeAccess int

const (
	// nodeNone refuses node secrets.
	nodeNone nodeAccess = iota
	// nodeEndpoint admits a node secret for the endpoint to check
	// against the hosts the call names (authenticateNode).
	nodeEndpoint
	// nodeOwn admits the secret of a registered host, limited by the
	// rule's nodeCheck to the agent's own hosts.
	nodeOwn
)

// rpcRule is who may call one RPC method.
type rpcRule struct {
	// users is the least a user token needs; Unset refuses user tokens.
	users policy.Access
	// ownProject binds a non-admin's call to its project: the args'
	// ProjectID must be the token's (empty is set to it).
	ownProject bool
	// ownUser binds the args' UserID the same way to the token's user.
	ownUser bool
	// ownInstances hides other projects' instances the args name
	// (InstanceID, InstanceIDs) from a non-admin: not found.
	ownInstances bool
	// userCheck is a further check of a non-admin's call (nested
	// fields, objects to look up); nil: none.
	userCheck func(s *Server, c *rpcCredential, args any) error
	// self admits a non-admin token, scoped or not, whose call is only
	// about its own user (userCheck decides); users may then be Admin.
	self bool
	// publicIf admits a call without any credential when it says so
	// (public parts of an otherwise guarded method).
	publicIf func(args any) bool
	// node is what a node secret may do; nodeCheck limits nodeOwn.
	node      nodeAccess
	nodeCheck func(s *Server, hosts map[string]bool, args any) error
	// nodeFilter, when set, trims a node call's reply to what the
	// agent may read.
	nodeFilter func(hosts map[string]bool) rpc.ReplyFilter
	// s3 admits the tokens S3.Verify issues (structs.S3TokenMethod),
	// which reach no other method.
	s3 bool
	// unrestricted refuses the token of a restricted application
	// credential, an admin's too: such a token may not create or delete
	// application credentials (Keystone's rule).
	unrestricted bool
	// doc and nodeDoc are what the policy page says beyond the levels,
	// of user tokens and of node secrets.
	doc, nodeDoc string
}

// Shorthands for the table.
var (
	rulePublic  = rpcRule{users: policy.Public}
	ruleServers = rpcRule{}
	ruleAdmin   = rpcRule{users: policy.Admin}
	ruleAnyone  = rpcRule{users: policy.Anyone}
)

// ruleNode is the node endpoints (node_auth.go): a node secret, which
// the endpoint checks against every host the call names.
var ruleNode = rpcRule{node: nodeEndpoint, nodeDoc: "of the hosts named, checked by the endpoint"}

// rpcRules is the rule of every RPC method.
var rpcRules = map[string]rpcRule{
	"Status.Ping":   rulePublic,
	"Status.Leader": rulePublic,
	"Status.Peers":  rulePublic,

	"Flavor.List":   ruleAnyone,
	"Flavor.Get":    ruleAnyone,
	"Flavor.Upsert": ruleAdmin,
	"Flavor.Delete": ruleAdmin,
	"Flavor.Access": ruleAdmin,

	"Operator.RaftGetConfiguration":      ruleAdmin,
	"Operator.RaftRemovePeer":            ruleAdmin,
	"Operator.RaftTransferLeadership":    ruleAdmin,
	"Operator.SnapshotSave":              ruleAdmin,
	"Operator.SnapshotRestore":           ruleAdmin,
	"Operator.SchedulerGetConfiguration": ruleAdmin,
	"Operator.SchedulerSetConfiguration": ruleAdmin,
	"Operator.GossipKeyring":             ruleAdmin,
	"Operator.NodeIntroCreate":           ruleAdmin,
	"Operator.PurgeDeleted":              ruleAdmin,

	"Host.Register":      ruleNode,
	"Host.Heartbeat":     ruleNode,
	"Host.Get":           {users: policy.Admin, node: nodeOwn, nodeFilter: hostDirectory, nodeDoc: hostDirectoryDoc},
	"Host.List":          {users: policy.Admin, node: nodeOwn, nodeFilter: hostDirectory, nodeDoc: hostDirectoryDoc},
	"Host.UpdateEnabled": ruleAdmin,
	"Host.ForceDown":     ruleAdmin,
	"Host.AgentExited":   ruleServers,
	"Host.Deregister":    ruleAdmin,

	"Instance.Create": {users: policy.Member, ownProject: true, ownUser: true, userCheck: checkInstanceCreate,
		doc: "no target host"},
	"Instance.Get": {users: policy.Reader, ownInstances: true, node: nodeOwn, nodeCheck: nodeInstanceArgs,
		nodeDoc: "instances on its hosts"},
	"Instance.List":         {users: policy.Reader, ownProject: true},
	"Instance.Delete":       {users: policy.Member, ownProject: true, ownInstances: true},
	"Instance.Action":       {users: policy.Member, ownProject: true, ownInstances: true},
	"Instance.Actions":      {users: policy.Reader, ownInstances: true},
	"Instance.RecordAction": {users: policy.Member, ownProject: true, ownInstances: true},
	"Instance.SetPassword": {users: policy.Member, ownInstances: true, node: nodeOwn, nodeCheck: nodeInstanceArgs,
		nodeDoc: "instances on its hosts, for the metadata service"},
	"Instance.SnapshotProgress": ruleNode,
	"Instance.Task":             {users: policy.Member, ownProject: true, ownInstances: true},
	"Instance.Update":           {users: policy.Member, ownInstances: true},
	"Instance.Usage":            {users: policy.Reader, ownProject: true},

	"Alloc.GetAllocs":        ruleNode,
	"Alloc.GetHostAllocs":    ruleNode,
	"Alloc.UpdateFromClient": ruleNode,
	"Alloc.List":             ruleAdmin,

	"Eval.List":    ruleAdmin,
	"Eval.Get":     ruleAdmin,
	"Eval.Dequeue": ruleServers,
	"Eval.Ack":     ruleServers,
	"Eval.Nack":    ruleServers,
	"Plan.Submit":  ruleServers,

	"Identity.Authenticate": rulePublic,
	"Identity.IssueToken":   rulePublic,
	"Identity.Bootstrap":    rulePublic,
	"Identity.SeedDev":      ruleServers,
	"Identity.List": {users: policy.Admin, self: true, userCheck: checkIdentityList, publicIf: publicIdentityList,
		doc: "the signing keys' public halves and the revocations are public; any token reads its own user and projects"},
	"Identity.Upsert": {users: policy.Admin, self: true, userCheck: checkIdentityUpsert,
		doc: "any token changes its own password"},
	"Identity.Delete": ruleAdmin,
	"Identity.RevokeToken": {users: policy.Admin, self: true, userCheck: checkTokenRevoke,
		doc: "any token revokes its own user's tokens"},
	"Identity.AppCredCreate": {users: policy.Anyone, ownProject: true, ownUser: true, unrestricted: true,
		doc: "not with a restricted application credential's token"},
	"Identity.AppCredList": {users: policy.Authenticated, ownUser: true},
	"Identity.AppCredDelete": {users: policy.Authenticated, ownUser: true, unrestricted: true,
		doc: "not with a restricted application credential's token"},

	"KeyPair.Create": {users: policy.Anyone, ownUser: true, userCheck: checkKeyPairCreate},
	"KeyPair.Delete": {users: policy.Anyone, ownUser: true},
	"KeyPair.Get": {users: policy.Anyone, ownUser: true, node: nodeOwn, nodeCheck: nodeKeyPairGet,
		nodeDoc: "the key pair of an instance on its hosts"},
	"KeyPair.List": {users: policy.Anyone, ownUser: true},

	"Migration.List": {users: policy.Reader, ownInstances: true, userCheck: checkMigrationList,
		doc: "an own instance's"},

	"ServerGroup.Create": {users: policy.Member, userCheck: checkServerGroupCreate, doc: "own project"},
	"ServerGroup.Delete": {users: policy.Member, userCheck: checkServerGroupOwn, doc: "own project's groups"},
	"ServerGroup.Get":    {users: policy.Reader, userCheck: checkServerGroupOwn, doc: "own project's groups"},
	"ServerGroup.List":   {users: policy.Reader, ownProject: true},

	"Aggregate.Create":      ruleAdmin,
	"Aggregate.Update":      ruleAdmin,
	"Aggregate.Delete":      ruleAdmin,
	"Aggregate.AddHost":     ruleAdmin,
	"Aggregate.RemoveHost":  ruleAdmin,
	"Aggregate.SetMetadata": ruleAdmin,
	"Aggregate.List":        {users: policy.Admin, node: nodeOwn, nodeDoc: "zones of hosts, image pre-caching"},
	"Aggregate.Get":         {users: policy.Admin, node: nodeOwn, nodeDoc: "zones of hosts, image pre-caching"},

	"Quota.Get":        {users: policy.Reader, ownProject: true},
	"Quota.GetUser":    {users: policy.Reader, ownProject: true},
	"Quota.GetClass":   ruleAnyone,
	"Quota.Update":     ruleAdmin,
	"Quota.UpdateUser": ruleAdmin,
	"Quota.Delete":     ruleAdmin,
	"Quota.DeleteUser": ruleAdmin,

	"ImageCache.List":    {users: policy.Admin, node: nodeOwn, nodeDoc: "image pre-caching"},
	"ImageCache.Request": ruleAdmin,

	"Image.Create": {users: policy.Member, userCheck: checkImageCreate, doc: "owned by its project"},
	"Image.Get":    {users: policy.Anyone, node: nodeOwn},
	"Image.List":   {users: policy.Anyone, node: nodeOwn},
	"Image.Update": {users: policy.Member, userCheck: checkImageModify, doc: "its project's images"},
	"Image.Delete": {users: policy.Member, userCheck: checkImageModify, node: nodeOwn, nodeCheck: nodeImageDelete,
		doc: "its project's images", nodeDoc: "snapshots of instances on its hosts, images its hosts' volumes upload to"},
	"Image.Member":     {users: policy.Member, userCheck: checkImageMember, doc: "its project's images, or its own membership"},
	"Image.MemberList": ruleAnyone,
	"Image.Data":       ruleAdmin,
	"Image.Location":   ruleServers,

	"S3.CredentialCreate": {users: policy.Anyone, ownProject: true, ownUser: true},
	"S3.CredentialList":   {users: policy.Anyone, ownUser: true},
	"S3.CredentialDelete": {users: policy.Anyone, ownUser: true},
	"S3.ImageImport":      {users: policy.Member, userCheck: checkImageCreate, doc: "its project's objects, owned by its project"},
	"S3.Verify":           {users: policy.Public, doc: "the request's AWS signature is the credential"},
	"S3.BucketCreate":     ruleS3,
	"S3.BucketDelete":     ruleS3,
	"S3.BucketGet":        {users: policy.Anyone, s3: true, userCheck: checkS3Bucket, doc: s3Doc},
	"S3.BucketList":       {users: policy.Anyone, s3: true, ownProject: true, doc: s3Doc},
	"S3.ObjectDelete":     ruleS3,
	"S3.ObjectGet":        {users: policy.Anyone, s3: true, userCheck: checkS3Bucket, doc: s3Doc},
	"S3.ObjectList":       ruleS3,
	"S3.UploadCreate":     ruleS3,
	"S3.ObjectPut":        ruleServers,
	"S3.Multipart":        ruleServers,

	// Streams (rpc.TypeStream): the hook checks the request frame.
	"S3.Put":      ruleS3,
	"S3.Complete": ruleS3,
	"Blob.Get": {users: policy.Anyone, s3: true, userCheck: checkBlobGet, node: nodeOwn, nodeCheck: nodeBlobGet,
		doc: "data of an image it may see, or of its project's objects", nodeDoc: blobGetNodeDoc},
	"Blob.Put": {users: policy.Member, userCheck: checkBlobPut, node: nodeOwn, nodeCheck: nodeBlobPut,
		doc: "its project's images", nodeDoc: "snapshots of instances on its hosts, images its hosts' volumes upload to"},

	"Net.List": {users: policy.Reader, doc: netDoc, node: nodeOwn, nodeCheck: nodeNetList,
		nodeDoc: "read-only; ports only of its hosts and of the instances on them"},
	"Net.Get":             netRule(policy.Reader),
	"Net.Addresses":       {users: policy.Reader, ownInstances: true},
	"Net.Quotas":          netRule(policy.Reader),
	"Net.Create":          netRule(policy.Member),
	"Net.Update":          netRule(policy.Member),
	"Net.Delete":          netRule(policy.Member),
	"Net.RouterInterface": netRule(policy.Member),
	"Net.AutoTopology":    netRule(policy.Member),
	"Net.UpdateQuotas":    ruleAdmin,
	"Net.AttachInterface": {users: policy.Member, ownInstances: true},
	"Net.DetachInterface": {users: policy.Member, ownInstances: true},
	"Net.SeedDev":         ruleServers,

	"NetLease.Report": ruleNode,
	"NetLease.List":   {users: policy.Admin, node: nodeOwn, nodeCheck: nodeHostArg, nodeDoc: "its hosts' leases"},

	"InstanceGroup.Register": ruleAdmin,
	"InstanceGroup.Plan":     ruleAdmin,
	"InstanceGroup.Get":      ruleAdmin,
	"InstanceGroup.List":     ruleAdmin,
	"InstanceGroup.Versions": ruleAdmin,
	"InstanceGroup.Stop":     ruleAdmin,
	"InstanceGroup.Revert":   ruleAdmin,

	"Console.Authorize": {users: policy.Member, ownInstances: true, node: nodeOwn, nodeCheck: nodeInstanceArgs,
		nodeDoc: "instances on its hosts"},
	"Console.Consume": {node: nodeOwn, nodeDoc: "console proxies; the console token is the authority"},
	"Console.Get":     ruleAdmin,

	"CA.Root":      ruleAnyone,
	"CA.IssueUser": {users: policy.Anyone, ownProject: true, ownUser: true},

	"Volume.Create": {users: policy.Member, ownProject: true, userCheck: checkVolumeType,
		doc: "types its project may use"},
	"Volume.List": {users: policy.Reader, ownProject: true},
	"Volume.Get":  {users: policy.Reader, ownProject: true},
	"Volume.Update": {users: policy.Member, ownProject: true, userCheck: checkVolumeResetStatus,
		doc: "os-reset_status admins only"},
	"Volume.Delete": {users: policy.Member, ownProject: true, userCheck: checkVolumeResetStatus,
		doc: "os-force_delete admins only"},
	"Volume.Attachment":              {users: policy.Member, ownProject: true},
	"Volume.UpdateComputeAttachment": {users: policy.Member, ownProject: true, ownInstances: true},
	"Volume.SnapshotCreate":          {users: policy.Member, ownProject: true},
	"Volume.SnapshotList":            {users: policy.Reader, ownProject: true},
	"Volume.SnapshotGet":             {users: policy.Reader, ownProject: true},
	"Volume.SnapshotUpdate": {users: policy.Member, ownProject: true, userCheck: checkVolumeResetStatus,
		doc: "os-reset_status admins only"},
	"Volume.SnapshotDelete": {users: policy.Member, ownProject: true},
	"Volume.UploadImage":    {users: policy.Member, ownProject: true},
	"Volume.Retype":         {users: policy.Member, ownProject: true, userCheck: checkVolumeType, doc: "types its project may use"},
	"Volume.TypeAccess":     ruleAdmin,
	"Volume.TypeList":       ruleAnyone,
	"Volume.TypeGet":        ruleAnyone,
	"Volume.TypeUpsert":     ruleAdmin,
	"Volume.TypeDelete":     ruleAdmin,
	"Volume.QuotaGet":       {users: policy.Reader, ownProject: true},
	"Volume.QuotaUpdate":    ruleAdmin,
	"Volume.Zones":          ruleAnyone,
	"Volume.HostVolumes":    ruleNode,
	"Volume.HostAttached":   ruleNode,
	"Volume.Report":         ruleNode,
}

// netDoc says how the Net endpoint's own policy applies: Neutron's
// rules, for the Caller the hook bound to the token.
const netDoc = "Neutron's rules as its project"

// netRule is a Net method's rule at a level.
func netRule(level policy.Access) rpcRule { return rpcRule{users: level, doc: netDoc} }

// hostDirectoryDoc explains what a node secret reads of hosts.
const hostDirectoryDoc = "its own hosts' records; of the others only name, zone, status and agent, to find an instance's agent and render zones"

// s3Doc explains the S3 rules: the servers verified the request's AWS
// signature (S3.Verify) and issued the token of the credential's user
// the agent calls with; its project's buckets only.
const s3Doc = "its project's buckets; S3 requests' tokens (S3.Verify) too"

// ruleS3 is an S3 store method: any project-scoped token, S3 requests'
// included, bound to its project (the request's Caller).
var ruleS3 = rpcRule{users: policy.Anyone, s3: true, doc: s3Doc}

// blobGetNodeDoc says which image data a node secret reads.
const blobGetNodeDoc = "public and community images, the images of instances on its hosts (boot, rescue, snapshots) and those pre-cached on its aggregates"

// describe renders a rule for the policy page.
func (r rpcRule) describe() string {
	var who []string
	switch r.users {
	case policy.Unset:
	case policy.Public:
		return "public"
	default:
		level := r.users.String()
		var own []string
		if r.ownProject || r.ownInstances {
			own = append(own, "own project")
		}
		if r.ownUser {
			own = append(own, "as itself")
		}
		if r.doc != "" {
			own = append(own, r.doc)
		}
		if len(own) > 0 {
			level += " (" + strings.Join(own, "; ") + ")"
		}
		who = append(who, level)
	}
	if r.node != nodeNone {
		node := "node secret"
		if r.nodeDoc != "" {
			node += " (" + r.nodeDoc + ")"
		}
		who = append(who, node)
	}
	if len(who) == 0 {
		return "servers only"
	}
	return strings.Join(who, ", or ")
}
