package server

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Networking's policy: Neutron's defaults, applied by the servers so
// that every API edge (Neutron's, Nova's proxies and boot path, the
// CLI) shares it. A project sees its own objects, plus shared and
// external networks (and their subnets), plus the ports on networks it
// owns; what a caller cannot see is "not found", what it sees but may
// not change is "disallowed by policy".

// netNamespace roots the ids the servers derive instead of drawing
// (a project's default security group, its auto-allocated topology, dev
// mode's networks), so that concurrent first uses agree on them.
var netNamespace = uuid.MustParse("3f0c6a53-8d0a-4b7e-9a57-2c1d2f9e6b41")

// derivedID is the id of a derived object named by parts.
func derivedID(parts ...string) string {
	key := ""
	for _, p := range parts {
		key += p + "/"
	}
	return uuid.NewSHA1(netNamespace, []byte(key)).String()
}

// newMAC draws a MAC in Neutron's base_mac fa:16:3e:00:00:00; the FSM
// checks it is unique on its network and the proposer retries if not.
func newMAC() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", b[0], b[1], b[2])
}

// freeMAC draws a MAC no port of the network has yet.
func freeMAC(state *fsm.StateStore, networkID string) string {
	for i := 0; ; i++ {
		mac := newMAC()
		if used, err := state.MACInUse(networkID, mac); err != nil || !used || i >= 8 {
			return mac
		}
	}
}

// policyError is Neutron's 403.
func policyError(rule string) error {
	return structs.NetErrorf(structs.KindPermission, structs.ErrPolicyNotAuthorized, "(rule:%s) is disallowed by policy", rule)
}

// owns reports whether the caller may change an object of a project.
func owns(c structs.NetCaller, projectID string) bool {
	return c.Admin || (c.ProjectID != "" && c.ProjectID == projectID)
}

// seesNetwork reports whether the caller may see a network.
func seesNetwork(c structs.NetCaller, n *structs.Network) bool {
	return owns(c, n.ProjectID) || n.Shared || n.External
}

// seesSubnet reports whether the caller may see a subnet: its own, or
// one of a network it sees but does not own.
func seesSubnet(state *fsm.StateStore, c structs.NetCaller, s *structs.Subnet) bool {
	if owns(c, s.ProjectID) {
		return true
	}
	n, err := state.NetworkByID(nil, s.NetworkID)
	return err == nil && n != nil && seesNetwork(c, n)
}

// seesPort reports whether the caller may see a port: its own, or one
// on a network it owns.
func seesPort(state *fsm.StateStore, c structs.NetCaller, p *structs.Port) bool {
	if owns(c, p.ProjectID) {
		return true
	}
	n, err := state.NetworkByID(nil, p.NetworkID)
	return err == nil && n != nil && owns(c, n.ProjectID) && c.ProjectID != ""
}

// ownerOf resolves the project of a new object: the caller's, or the
// one an admin names. A member naming another project is refused as
// Neutron refuses it.
func ownerOf(c structs.NetCaller, asked string) (string, error) {
	if asked == "" || asked == c.ProjectID {
		return c.ProjectID, nil
	}
	if !c.Admin {
		return "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest,
			"Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges")
	}
	return asked, nil
}

// applyNet builds and proposes a networking entry, and builds it again
// when it lost a race (an update whose object changed meanwhile, a drawn
// MAC that was taken): the entry is always decided on the newest state.
func (s *Server) applyNet(build func(state *fsm.StateStore) ([]*structs.NetChange, error)) (uint64, error) {
	for attempt := 0; ; attempt++ {
		changes, err := build(s.fsm.State())
		if err != nil {
			return 0, err
		}
		if len(changes) == 0 {
			return s.fsm.State().LatestIndex(), nil
		}
		if err := s.stampSegments(changes); err != nil {
			return 0, err
		}
		index, err := s.apply(structs.NetApplyType, &structs.NetApplyEntry{Changes: changes, At: time.Now().UnixNano()})
		if err != nil && attempt < 5 && (fsm.NetStale(err) || structs.ErrorType(err) == structs.ErrMacAddressInUse) {
			continue
		}
		return index, err
	}
}

// defaultGroupChanges are the changes that create a project's default
// security group with Neutron's rules, unless the project has it. Its
// id derives from the project, so concurrent first uses make one group.
func defaultGroupChanges(state *fsm.StateStore, projectID string) ([]*structs.NetChange, string, error) {
	id := derivedID("default-security-group", projectID)
	g, err := state.SecurityGroupByID(nil, id)
	if err != nil || g != nil {
		return nil, id, err
	}
	changes := []*structs.NetChange{{Op: structs.NetOpEnsure, Kind: structs.NetKindSecurityGroup,
		SecurityGroup: &structs.SecurityGroup{ID: id, Name: structs.DefaultSecurityGroupName,
			Description: "Default security group", ProjectID: projectID, Stateful: true}}}
	var ids [4]string
	for i := range ids {
		ids[i] = derivedID("default-security-group-rule", projectID, fmt.Sprint(i))
	}
	for _, r := range structs.DefaultSecurityGroupRules(id, projectID, ids) {
		changes = append(changes, &structs.NetChange{Op: structs.NetOpEnsure, Kind: structs.NetKindSecurityGroupRule, Rule: r})
	}
	return changes, id, nil
}

// isDefaultGroup reports whether g is its project's default group.
func isDefaultGroup(g *structs.SecurityGroup) bool {
	return g.ID == derivedID("default-security-group", g.ProjectID)
}
