package ec2

import (
	"encoding/base64"
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// clientTokenKey is the metadata key RunInstances records a ClientToken
// under, for DescribeInstances's clientToken; it is no tag.
const clientTokenKey = "aws:ec2:client-token"

// maxUserData is EC2's limit on user data (16 KiB before base64).
const maxUserData = 16 << 10

// runInstances answers RunInstances with Instance.Create, as the Compute
// API boots servers: ImageId (ami-…) resolved against the images the
// project may use, InstanceType a flavor's name, MaxCount instances
// (MinCount at most that), KeyName, SecurityGroupId.n (Stratus security
// group ids or names), UserData (base64), Placement.AvailabilityZone,
// TagSpecification.n of resource type instance as metadata (Name also
// names the server), and ClientToken as the boot's idempotency key: a
// retry with the same token answers the instances it made.
func runInstances(q *request) error {
	args, err := q.runArgs()
	if err != nil {
		return err
	}
	var out structs.InstanceCreateResponse
	err = retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		out, args.Forwarded = structs.InstanceCreateResponse{}, false
		return q.call("Instance.Create", args, &out)
	})
	if err != nil {
		return runError(err)
	}
	resp := &runInstancesResponse{OwnerID: q.caller.ProjectID}
	if rs := reservations(out.Instances); len(rs) > 0 {
		resp.ReservationID, resp.Instances = rs[0].ReservationID, rs[0].Instances
	}
	return q.reply(resp)
}

// runArgs reads RunInstances's parameters into a create request.
func (q *request) runArgs() (*structs.InstanceCreateRequest, error) {
	image, err := q.required("ImageId")
	if err != nil {
		return nil, err
	}
	minCount, err := q.intParam("MinCount", 1)
	if err != nil {
		return nil, err
	}
	maxCount, err := q.intParam("MaxCount", minCount)
	if err != nil {
		return nil, err
	}
	if minCount < 1 || maxCount < minCount {
		return nil, ec2Error(codeInvalidParameterValue, "MinCount (%d) must be at least 1 and at most MaxCount (%d).", minCount, maxCount)
	}
	args := &structs.InstanceCreateRequest{FlavorID: q.params.Get("InstanceType"), Count: maxCount,
		AZ: q.params.Get("Placement.AvailabilityZone"), KeyName: q.params.Get("KeyName"),
		ProjectID: q.caller.ProjectID, UserID: q.caller.UserID, Metadata: map[string]string{}}
	if args.FlavorID == "" {
		args.FlavorID = "m1.small"
	}
	if args.ImageID, err = q.resolveImage(image); err != nil {
		return nil, err
	}
	for _, read := range []func(*structs.InstanceCreateRequest) error{q.runGuest, q.runNetworks, q.runTags} {
		if err := read(args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// runGuest reads KeyName (which must exist) and UserData.
func (q *request) runGuest(args *structs.InstanceCreateRequest) error {
	if args.KeyName != "" {
		var kp structs.SingleKeyPairResponse
		err := q.call("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: q.caller.UserID, Name: args.KeyName}, &kp)
		if structs.KindOf(err) == structs.KindNotFound {
			return ec2Error(codeKeyPairNotFound, "The key pair '%s' does not exist", args.KeyName)
		} else if err != nil {
			return err
		}
	}
	if ud := q.params.Get("UserData"); ud != "" {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(ud))
		if err != nil {
			return ec2Error(codeInvalidParameterValue, "Invalid BASE64 encoding of user data.")
		}
		if len(raw) > maxUserData {
			return ec2Error(codeInvalidParameterValue, "User data is limited to 16384 bytes")
		}
		args.UserData = string(raw)
	}
	return nil
}

// runNetworks reads SecurityGroupId.n (sg- ids), SecurityGroup.n
// (names) and SubnetId (the subnet's network; without it the project's
// default network, as the Compute API boots).
func (q *request) runNetworks(args *structs.InstanceCreateRequest) error {
	for _, id := range q.list("SecurityGroupId") {
		g, _, err := q.resolveGroup(id, "")
		if err != nil {
			return err
		}
		args.SecurityGroups = append(args.SecurityGroups, g.ID)
	}
	args.SecurityGroups = append(args.SecurityGroups, q.list("SecurityGroup")...)
	if id := q.params.Get("SubnetId"); id != "" {
		sub, err := q.resolveSubnet(id)
		if err != nil {
			return err
		}
		args.NetworksMode = structs.NetworksList
		args.Networks = []*structs.InstanceNetworkRequest{{NetworkID: sub.NetworkID}}
	}
	return nil
}

// runTags reads TagSpecification.n (instance tags as metadata; Name
// names the servers) and ClientToken (the idempotency key, per project
// on the servers).
func (q *request) runTags(args *structs.InstanceCreateRequest) error {
	for _, i := range q.indices("TagSpecification") {
		p := "TagSpecification." + strconv.Itoa(i) + "."
		if rt := q.params.Get(p + "ResourceType"); rt != "instance" {
			return ec2Error(codeInvalidParameterValue, "'%s' is not a valid taggable resource type for this operation.", rt)
		}
		for k, v := range q.tagSet(p) {
			args.Metadata[k] = v
		}
	}
	args.Name = args.Metadata["Name"]
	if args.Name == "" {
		args.Name = "ec2-instance"
	}
	tok := q.params.Get("ClientToken")
	if tok == "" {
		args.IdempotencyKey = retry.NewKey()
		return nil
	}
	args.IdempotencyKey = "ec2:" + tok
	if err := structs.ValidateIdempotencyKey(args.IdempotencyKey); err != nil || len(tok) > 64 {
		return ec2Error(codeInvalidParameterValue, "The ClientToken must be 1-64 printable ASCII characters.")
	}
	args.Metadata[clientTokenKey] = tok
	return nil
}

// runError maps a refused boot to EC2's codes.
func runError(err error) error {
	msg := structs.Message(err)
	switch {
	case structs.KindOf(err) == structs.KindNotFound && strings.Contains(strings.ToLower(msg), "flavor"):
		return ec2Error(codeInvalidParameterValue, "Invalid value for InstanceType: %s", msg)
	case structs.KindOf(err) == structs.KindConflict && strings.Contains(msg, "Idempotency-Key"):
		return ec2Error(codeIdempotentMismatch, "The client token was already used for a different request.")
	case strings.Contains(msg, "No valid host"):
		return ec2Error(codeInsufficientCapacity, "Insufficient capacity: %s", msg)
	}
	return err
}

type runInstancesResponse struct {
	XMLName xml.Name `xml:"RunInstancesResponse"`
	meta
	ReservationID string         `xml:"reservationId"`
	OwnerID       string         `xml:"ownerId"`
	Groups        []struct{}     `xml:"groupSet>item"`
	Instances     []instanceItem `xml:"instancesSet>item"`
}
