package native

import (
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// routes is every route of the API with who may call it when ACLs are
// on: the policy of /v1 in one place (website/policy.md lists it, in
// this order). Routes on one instance (/v1/instances/{id}…) also hide
// other projects' instances from a confined caller.
func (a *API) routes() []route.Route[handler] {
	return []route.Route[handler]{
		// The cluster and the agent itself.
		{Pattern: "GET /v1/status/leader", Access: policy.Public, Handle: a.statusLeader},
		{Pattern: "GET /v1/status/peers", Access: policy.Public, Handle: a.statusPeers},
		{Pattern: "GET /v1/status/ready", Access: policy.Public, Handle: a.statusReady},
		{Pattern: "GET /v1/agent/self", Access: policy.Admin, Handle: a.agentSelf},
		{Pattern: "GET /v1/agent/members", Access: policy.Admin, Handle: a.agentMembers},
		{Pattern: "GET /v1/agent/logs", Access: policy.Admin, Handle: a.agentLogs},
		{Pattern: "GET /v1/agent/pprof", Access: policy.Admin, Handle: a.pprofIndex},
		{Pattern: "GET /v1/agent/pprof/{profile}", Access: policy.Admin, Handle: a.pprofProfile},

		{Pattern: "GET /v1/flavors", Access: policy.Anyone, Handle: a.flavorList},
		{Pattern: "POST /v1/flavors", Access: policy.Admin, Handle: a.flavorCreate},
		{Pattern: "GET /v1/flavors/{id}", Access: policy.Anyone, Handle: a.flavorGet},
		{Pattern: "DELETE /v1/flavors/{id}", Access: policy.Admin, Handle: a.flavorDelete},

		{Pattern: "GET /v1/keypairs", Access: policy.Anyone, Handle: a.keyPairList},
		{Pattern: "POST /v1/keypairs", Access: policy.Anyone, Handle: a.keyPairCreate},
		{Pattern: "GET /v1/keypairs/{name}", Access: policy.Anyone, Handle: a.keyPairGet},
		{Pattern: "DELETE /v1/keypairs/{name}", Access: policy.Anyone, Handle: a.keyPairDelete},

		// Instances and their lifecycle.
		{Pattern: "GET /v1/instances", Access: policy.Reader, Handle: a.instanceList},
		{Pattern: "POST /v1/instances", Access: policy.Member, Handle: a.instanceCreate},
		{Pattern: "GET /v1/instances/{id}", Access: policy.Reader, Handle: a.instanceGet},
		{Pattern: "DELETE /v1/instances/{id}", Access: policy.Member, Handle: a.instanceDelete},
		{Pattern: "POST /v1/instances/{id}/actions", Access: policy.Member, Handle: a.instanceAction},
		{Pattern: "GET /v1/instances/{id}/actions", Access: policy.Reader, Handle: a.instanceActionList},
		{Pattern: "GET /v1/instances/{id}/actions/{request_id}", Access: policy.Reader, Handle: a.instanceActionGet},
		{Pattern: "POST /v1/instances/{id}/snapshot", Access: policy.Member, Handle: a.instanceSnapshot},
		{Pattern: "GET /v1/migrations", Access: policy.Admin, Handle: a.migrationList},

		{Pattern: "GET /v1/volumes", Access: policy.Reader, Handle: a.volumeList},
		{Pattern: "POST /v1/volumes", Access: policy.Member, Handle: a.volumeCreate},
		{Pattern: "GET /v1/volumes/{id}", Access: policy.Reader, Handle: a.volumeGet},
		{Pattern: "DELETE /v1/volumes/{id}", Access: policy.Member, Handle: a.volumeDelete},
		{Pattern: "POST /v1/volumes/{id}/snapshot", Access: policy.Member, Handle: a.volumeSnapshot},

		// Hosts and scheduling.
		{Pattern: "GET /v1/hosts", Access: policy.Admin, Handle: a.hostList},
		{Pattern: "GET /v1/hosts/{id}", Access: policy.Admin, Handle: a.hostGet},
		{Pattern: "POST /v1/hosts/{id}/enable", Access: policy.Admin, Handle: a.hostEnable},
		{Pattern: "POST /v1/hosts/{id}/disable", Access: policy.Admin, Handle: a.hostDisable},
		{Pattern: "POST /v1/hosts/{id}/drain", Access: policy.Admin, Handle: a.hostDrain},
		{Pattern: "GET /v1/allocations", Access: policy.Admin, Handle: a.allocList},
		{Pattern: "GET /v1/evaluations", Access: policy.Admin, Handle: a.evalList},
		{Pattern: "GET /v1/evaluations/{id}", Access: policy.Admin, Handle: a.evalGet},

		// Operators.
		{Pattern: "GET /v1/operator/raft/configuration", Access: policy.Admin, Handle: a.raftConfiguration},
		{Pattern: "DELETE /v1/operator/raft/peer", Access: policy.Admin, Handle: a.raftRemovePeer},
		{Pattern: "GET /v1/operator/snapshot", Access: policy.Admin, Handle: a.snapshotSave},
		{Pattern: "PUT /v1/operator/snapshot", Access: policy.Admin, Handle: a.snapshotRestore},
		{Pattern: "GET /v1/operator/scheduler/configuration", Access: policy.Admin, Handle: a.schedulerConfigGet},
		{Pattern: "PUT /v1/operator/scheduler/configuration", Access: policy.Admin, Handle: a.schedulerConfigSet},
		{Pattern: "POST /v1/operator/purge-deleted", Access: policy.Admin, Handle: a.purgeDeleted},

		// Images: records, data, imports from S3 (images.go, s3.go). The
		// native API is the operator's: it sees and changes every image.
		{Pattern: "GET /v1/images", Access: policy.Admin, Handle: a.imageList},
		{Pattern: "POST /v1/images", Access: policy.Admin, Handle: a.imageCreate},
		{Pattern: "GET /v1/images/{id}", Access: policy.Admin, Handle: a.imageGet},
		{Pattern: "DELETE /v1/images/{id}", Access: policy.Admin, Handle: a.imageDelete},
		{Pattern: "PUT /v1/images/{id}/data", Access: policy.Admin, Handle: a.imageUpload},
		{Pattern: "GET /v1/images/{id}/data", Access: policy.Admin, Handle: a.imageDownload},
		{Pattern: "POST /v1/images/import", Access: policy.Admin, Handle: a.imageImport},
		{Pattern: "GET /v1/s3/credentials", Access: policy.Admin, Handle: a.s3CredentialList},
		{Pattern: "POST /v1/s3/credentials", Access: policy.Admin, Handle: a.s3CredentialCreate},
		{Pattern: "DELETE /v1/s3/credentials/{access}", Access: policy.Admin, Handle: a.s3CredentialDelete},
		{Pattern: "POST /v1/operator/node-intro", Access: policy.Admin, Handle: a.nodeIntroCreate},

		// Networking, as the operator (networks.go).
		{Pattern: "GET /v1/networks", Access: policy.Admin, Handle: a.netList(structs.NetKindNetwork)},
		{Pattern: "POST /v1/networks", Access: policy.Admin, Handle: a.networkCreate},
		{Pattern: "GET /v1/networks/{id}", Access: policy.Admin, Handle: a.netGet(structs.NetKindNetwork)},
		{Pattern: "DELETE /v1/networks/{id}", Access: policy.Admin, Handle: a.netDelete(structs.NetKindNetwork)},
		{Pattern: "GET /v1/subnets", Access: policy.Admin, Handle: a.netList(structs.NetKindSubnet)},
		{Pattern: "POST /v1/subnets", Access: policy.Admin, Handle: a.subnetCreate},
		{Pattern: "GET /v1/subnets/{id}", Access: policy.Admin, Handle: a.netGet(structs.NetKindSubnet)},
		{Pattern: "DELETE /v1/subnets/{id}", Access: policy.Admin, Handle: a.netDelete(structs.NetKindSubnet)},
		{Pattern: "GET /v1/ports", Access: policy.Admin, Handle: a.netList(structs.NetKindPort)},
		{Pattern: "POST /v1/ports", Access: policy.Admin, Handle: a.portCreate},
		{Pattern: "GET /v1/ports/{id}", Access: policy.Admin, Handle: a.netGet(structs.NetKindPort)},
		{Pattern: "DELETE /v1/ports/{id}", Access: policy.Admin, Handle: a.netDelete(structs.NetKindPort)},

		// Instance groups (groups.go).
		{Pattern: "GET /v1/groups", Access: policy.Admin, Handle: a.groupList},
		{Pattern: "POST /v1/groups", Access: policy.Admin, Handle: a.groupRegister},
		{Pattern: "GET /v1/groups/{name}", Access: policy.Admin, Handle: a.groupGet},
		{Pattern: "GET /v1/groups/{name}/versions", Access: policy.Admin, Handle: a.groupVersions},
		{Pattern: "POST /v1/groups/{name}/plan", Access: policy.Admin, Handle: a.groupPlan},
		{Pattern: "POST /v1/groups/{name}/stop", Access: policy.Admin, Handle: a.groupStop},
		{Pattern: "POST /v1/groups/{name}/revert", Access: policy.Admin, Handle: a.groupRevert},

		// The gossip keyring, as Nomad's /v1/agent/keyring.
		{Pattern: "GET /v1/agent/keyring/list", Access: policy.Admin, Handle: a.keyringList},
		{Pattern: "POST /v1/agent/keyring/{op}", Access: policy.Admin, Handle: a.keyringChange},
		{Pattern: "PUT /v1/agent/keyring/{op}", Access: policy.Admin, Handle: a.keyringChange},

		// What the agent that hosts an instance or runs a host answers;
		// other agents forward to it (consoles.go).
		{Pattern: "GET /v1/instances/{id}/console-output", Access: policy.Member, Handle: a.consoleOutput},
		{Pattern: "POST /v1/instances/{id}/consoles", Access: policy.Member, Handle: a.consoleOpen},
		{Pattern: "GET /v1/instances/{id}/diagnostics", Access: policy.Admin, Handle: a.instanceDiagnostics},
		{Pattern: "POST /v1/instances/{id}/admin-password", Access: policy.Member, Handle: a.adminPassword},
		{Pattern: "GET /v1/hosts/{id}/uptime", Access: policy.Admin, Handle: a.hostUptime},

		// The one-time first-admin bootstrap is public: a cluster without
		// users has no one to authenticate, and the servers refuse it once
		// any user exists.
		{Pattern: "POST /v1/operator/bootstrap", Access: policy.Public, Handle: a.operatorBootstrap},

		// The web UI's reads beyond the rest of /v1 (ui.go).
		{Pattern: "GET /v1/status/cluster", Access: policy.Anyone, Handle: a.statusCluster},
		{Pattern: "GET /v1/watch/instances", Access: policy.Anyone, Handle: a.watchInstances},
	}
}
