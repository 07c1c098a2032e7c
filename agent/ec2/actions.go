package ec2

import (
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// action is one EC2 action: its name (the Action parameter), the least
// role its caller needs, and its handler.
type action struct {
	Name   string
	Access policy.Access
	Handle func(*request) error
}

// table is every action served, each with its access level: the
// Describe* and Get* reads need the reader role on the credential's
// project, every change the member role, as on the Compute API. The
// servers apply their own policy to each call too.
func (a *API) table() []action {
	return []action{
		// Instances (instances*.go).
		{Name: "RunInstances", Access: policy.Member, Handle: runInstances},
		{Name: "DescribeInstances", Access: policy.Reader, Handle: describeInstances},
		{Name: "DescribeInstanceStatus", Access: policy.Reader, Handle: describeInstanceStatus},
		{Name: "TerminateInstances", Access: policy.Member, Handle: terminateInstances},
		{Name: "StartInstances", Access: policy.Member, Handle: startInstances},
		{Name: "StopInstances", Access: policy.Member, Handle: stopInstances},
		{Name: "RebootInstances", Access: policy.Member, Handle: rebootInstances},
		{Name: "GetConsoleOutput", Access: policy.Reader, Handle: getConsoleOutput},
		{Name: "ModifyInstanceAttribute", Access: policy.Member, Handle: modifyInstanceAttribute},
		{Name: "DescribeInstanceAttribute", Access: policy.Reader, Handle: describeInstanceAttribute},

		// Key pairs (keypairs.go).
		{Name: "CreateKeyPair", Access: policy.Member, Handle: createKeyPair},
		{Name: "ImportKeyPair", Access: policy.Member, Handle: importKeyPair},
		{Name: "DescribeKeyPairs", Access: policy.Reader, Handle: describeKeyPairs},
		{Name: "DeleteKeyPair", Access: policy.Member, Handle: deleteKeyPair},

		// Volumes and their snapshots (volume*.go, snapshots.go).
		{Name: "CreateVolume", Access: policy.Member, Handle: createVolume},
		{Name: "DescribeVolumes", Access: policy.Reader, Handle: describeVolumes},
		{Name: "DescribeVolumeStatus", Access: policy.Reader, Handle: describeVolumeStatus},
		{Name: "DeleteVolume", Access: policy.Member, Handle: deleteVolume},
		{Name: "AttachVolume", Access: policy.Member, Handle: attachVolume},
		{Name: "DetachVolume", Access: policy.Member, Handle: detachVolume},
		{Name: "CreateSnapshot", Access: policy.Member, Handle: createSnapshot},
		{Name: "DescribeSnapshots", Access: policy.Reader, Handle: describeSnapshots},
		{Name: "DeleteSnapshot", Access: policy.Member, Handle: deleteSnapshot},

		// Tags (tags.go).
		{Name: "CreateTags", Access: policy.Member, Handle: createTags},
		{Name: "DeleteTags", Access: policy.Member, Handle: deleteTags},
		{Name: "DescribeTags", Access: policy.Reader, Handle: describeTags},

		// Security groups (security_groups.go, security_group_rules.go)
		// and VPCs (vpcs.go).
		{Name: "DescribeSecurityGroups", Access: policy.Reader, Handle: describeSecurityGroups},
		{Name: "CreateSecurityGroup", Access: policy.Member, Handle: createSecurityGroup},
		{Name: "DeleteSecurityGroup", Access: policy.Member, Handle: deleteSecurityGroup},
		{Name: "AuthorizeSecurityGroupIngress", Access: policy.Member, Handle: authorizeIngress},
		{Name: "AuthorizeSecurityGroupEgress", Access: policy.Member, Handle: authorizeEgress},
		{Name: "RevokeSecurityGroupIngress", Access: policy.Member, Handle: revokeIngress},
		{Name: "RevokeSecurityGroupEgress", Access: policy.Member, Handle: revokeEgress},
		{Name: "DescribeVpcs", Access: policy.Reader, Handle: describeVpcs},
		{Name: "DescribeSubnets", Access: policy.Reader, Handle: describeSubnets},

		// Elastic IPs (addresses.go).
		{Name: "AllocateAddress", Access: policy.Member, Handle: allocateAddress},
		{Name: "AssociateAddress", Access: policy.Member, Handle: associateAddress},
		{Name: "DisassociateAddress", Access: policy.Member, Handle: disassociateAddress},
		{Name: "ReleaseAddress", Access: policy.Member, Handle: releaseAddress},
		{Name: "DescribeAddresses", Access: policy.Reader, Handle: describeAddresses},

		// The catalog: images (catalog.go, images.go), regions, zones,
		// instance types (catalog.go).
		{Name: "DescribeImages", Access: policy.Reader, Handle: describeImages},
		{Name: "CreateImage", Access: policy.Member, Handle: createImage},
		{Name: "DeregisterImage", Access: policy.Member, Handle: deregisterImage},
		{Name: "DescribeRegions", Access: policy.Reader, Handle: describeRegions},
		{Name: "DescribeAvailabilityZones", Access: policy.Reader, Handle: describeAvailabilityZones},
		{Name: "DescribeInstanceTypes", Access: policy.Reader, Handle: describeInstanceTypes},
	}
}

// dispatch picks the action named by the Action parameter, checks the
// caller's role against its level and runs it.
func (q *request) dispatch() error {
	name := q.params.Get("Action")
	if name == "" {
		return ec2Error(codeMissingAction, "The request must contain the parameter Action.")
	}
	if v := q.params.Get("Version"); v == "" {
		return ec2Error(codeMissingParameter, "The request must contain the parameter Version.")
	}
	ac, ok := q.api.actions[name]
	if !ok {
		return ec2Error(codeInvalidAction, "The action %s is not valid for this web service.", name)
	}
	route.Observe(q.r.Context(), "Action="+name) // the request metrics' route label
	if !q.caller.subject.IsAdmin() && !ac.Access.Allows(&q.caller.subject) {
		return ec2Error(codeUnauthorizedOperation, "You are not authorized to perform this operation: %s needs the %s role.", name, ac.Access)
	}
	if q.params.Get("DryRun") == "true" {
		return ec2Error("DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
	}
	return ac.Handle(q)
}
