package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestEC2SecurityGroupsAndVpcsWithTheGoSDK: security groups made and
// changed through EC2 are Neutron's; VPCs and subnets are the
// project's networks; an instance boots into a subnet and a group by
// their EC2 ids.
func TestEC2SecurityGroupsAndVpcsWithTheGoSDK(t *testing.T) {
	t.Parallel()
	on := true
	a := testAgent(t, func(c *Config) { c.ACL = &ACLConfig{Enabled: &on} })
	ctx := context.Background()
	demo := keystoneToken(t, a, "demo")
	userID, projectID := whoami(t, a, demo)
	cli := ec2Client(a, ec2Credential(t, a, demo, userID, projectID))

	made, err := cli.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("web"), Description: aws.String("web servers")})
	if err != nil {
		t.Fatal(err)
	}
	sg := aws.ToString(made.GroupId)
	if _, err := cli.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("web"), Description: aws.String("again")}); ec2Code(err) != "InvalidGroup.Duplicate" {
		t.Fatalf("a second group named web: %v", err)
	}
	ssh := types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(22), ToPort: aws.Int32(22),
		IpRanges: []types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}}
	if _, err := cli.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(sg), IpPermissions: []types.IpPermission{ssh}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(sg), IpPermissions: []types.IpPermission{ssh}}); ec2Code(err) != "InvalidPermission.Duplicate" {
		t.Fatalf("the same rule twice: %v", err)
	}
	groups, err := cli.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{sg}})
	if err != nil || len(groups.SecurityGroups) != 1 {
		t.Fatalf("describe %+v %v", groups, err)
	}
	g := groups.SecurityGroups[0]
	if len(g.IpPermissions) != 1 || aws.ToInt32(g.IpPermissions[0].FromPort) != 22 || aws.ToString(g.IpPermissions[0].IpRanges[0].CidrIp) != "10.0.0.0/8" || len(g.IpPermissionsEgress) == 0 {
		t.Fatalf("group %+v", g)
	}
	if _, err := cli.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(sg), IpPermissions: []types.IpPermission{ssh}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(sg), IpPermissions: []types.IpPermission{ssh}}); ec2Code(err) != "InvalidPermission.NotFound" {
		t.Fatalf("revoking a rule that is gone: %v", err)
	}

	var subnet string
	waitFor(t, "the dev networks", func() error {
		subnets, err := cli.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
		if err != nil {
			return err
		}
		if len(subnets.Subnets) == 0 {
			return errors.New("no subnets yet")
		}
		subnet = aws.ToString(subnets.Subnets[0].SubnetId)
		return nil
	})
	vpcs, err := cli.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	if err != nil || len(vpcs.Vpcs) == 0 || aws.ToString(vpcs.Vpcs[0].CidrBlock) == "" {
		t.Fatalf("vpcs %+v %v", vpcs, err)
	}

	out, err := cli.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String("ami-6a9b7e2c5d1f4c3b9"), InstanceType: "m1.tiny",
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(subnet), SecurityGroupIds: []string{sg}})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Instances[0].InstanceId)
	running := ec2.NewInstanceRunningWaiter(cli, fastWaits(func(o *ec2.InstanceRunningWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := running.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	// An elastic IP: allocated, associated with the instance, released
	// only once disassociated.
	eip, err := cli.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: types.DomainTypeVpc})
	if err != nil || aws.ToString(eip.PublicIp) == "" {
		t.Fatalf("allocate %+v %v", eip, err)
	}
	assoc, err := cli.AssociateAddress(ctx, &ec2.AssociateAddressInput{AllocationId: eip.AllocationId, InstanceId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := cli.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{AllocationIds: []string{aws.ToString(eip.AllocationId)}})
	if err != nil || len(addrs.Addresses) != 1 || aws.ToString(addrs.Addresses[0].InstanceId) != id ||
		aws.ToString(addrs.Addresses[0].AssociationId) != aws.ToString(assoc.AssociationId) || aws.ToString(addrs.Addresses[0].PrivateIpAddress) == "" {
		t.Fatalf("addresses %+v %v", addrs, err)
	}
	shown, err := cli.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if inst := shown.Reservations[0].Instances[0]; aws.ToString(inst.SubnetId) != subnet || aws.ToString(inst.PrivateIpAddress) == "" ||
		aws.ToString(inst.PublicIpAddress) != aws.ToString(eip.PublicIp) {
		t.Fatalf("the instance's addresses: subnet %s private %s public %s", aws.ToString(inst.SubnetId), aws.ToString(inst.PrivateIpAddress), aws.ToString(inst.PublicIpAddress))
	}
	if _, err := cli.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: eip.AllocationId}); ec2Code(err) != "InvalidIPAddress.InUse" {
		t.Fatalf("releasing an address in use: %v", err)
	}
	if _, err := cli.DisassociateAddress(ctx, &ec2.DisassociateAddressInput{AssociationId: assoc.AssociationId}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: eip.AllocationId}); err != nil {
		t.Fatal(err)
	}
	if addrs, err := cli.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{}); err != nil || len(addrs.Addresses) != 0 {
		t.Fatalf("addresses after release %+v %v", addrs, err)
	}

	if _, err := cli.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sg)}); ec2Code(err) != "DependencyViolation" {
		t.Fatalf("deleting a group in use: %v", err)
	}
	if _, err := cli.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}

	// Tags: a group keeps none; the project's own VPC keeps its Name
	// (the network's name) and no other tag; the shared dev network is
	// another project's.
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{sg}, Tags: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}); ec2Code(err) != "UnsupportedOperation" {
		t.Fatalf("tagging a security group: %v", err)
	}
	netID := volumeCall(t, a, "POST", "/network/v2.0/networks", demo, "", map[string]any{"network": map[string]any{"name": "mine"}}).
		want(t, http.StatusCreated).body["network"].(map[string]any)["id"].(string)
	vpc := "vpc-" + strings.ReplaceAll(netID, "-", "")[:17]
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{vpc}, Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("renamed")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{vpc}, Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("x")}}}); ec2Code(err) != "UnsupportedOperation" {
		t.Fatalf("a tag other than Name on a vpc: %v", err)
	}
	if mine, err := cli.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{vpc}}); err != nil || len(mine.Vpcs) != 1 || aws.ToString(mine.Vpcs[0].Tags[0].Value) != "renamed" {
		t.Fatalf("the renamed vpc %+v %v", mine, err)
	}
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(vpcs.Vpcs[0].VpcId)}, Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("x")}}}); ec2Code(err) != "InvalidVpcID.NotFound" {
		t.Fatalf("tagging the shared network: %v", err)
	}
}
