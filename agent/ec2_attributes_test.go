package agent

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestEC2InstanceAttributesWithTheGoSDK: ModifyInstanceAttribute and
// DescribeInstanceAttribute with the AWS SDK. The instance type and the
// user data change only when stopped (a resize, confirmed when the
// instance is started), sourceDestCheck and the groups on the ports,
// one attribute a call, and an attribute Stratus does not keep is
// refused.
func TestEC2InstanceAttributesWithTheGoSDK(t *testing.T) {
	t.Parallel()
	on := true
	a := testAgent(t, func(c *Config) {
		c.ACL = &ACLConfig{Enabled: &on}
		c.Server = &ServerConfig{AllowResizeToSameHost: true}
	})
	ctx := context.Background()
	demo := keystoneToken(t, a, "demo")
	userID, projectID := whoami(t, a, demo)
	cli := ec2Client(a, ec2Credential(t, a, demo, userID, projectID))

	run, err := cli.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String("ami-6a9b7e2c5d1f4c3b9"), InstanceType: "m1.tiny",
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(run.Instances[0].InstanceId)
	ids := &ec2.DescribeInstancesInput{InstanceIds: []string{id}}
	running := ec2.NewInstanceRunningWaiter(cli, fastWaits(func(o *ec2.InstanceRunningWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := running.Wait(ctx, ids, 2*time.Minute); err != nil {
		t.Fatalf("waiting for running: %v", err)
	}
	attr := func(name types.InstanceAttributeName) *ec2.DescribeInstanceAttributeOutput {
		t.Helper()
		out, err := cli.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: aws.String(id), Attribute: name})
		if err != nil {
			t.Fatalf("describe %s: %v", name, err)
		}
		return out
	}
	modify := func(in *ec2.ModifyInstanceAttributeInput) error {
		in.InstanceId = aws.String(id)
		_, err := cli.ModifyInstanceAttribute(ctx, in)
		return err
	}
	if v := aws.ToString(attr(types.InstanceAttributeNameInstanceType).InstanceType.Value); v != "m1.tiny" {
		t.Fatalf("instance type %q", v)
	}
	if v := aws.ToBool(attr(types.InstanceAttributeNameSourceDestCheck).SourceDestCheck.Value); !v {
		t.Fatal("a new instance does not check source and destination")
	}
	small := &ec2.ModifyInstanceAttributeInput{InstanceType: &types.AttributeValue{Value: aws.String("m1.small")}}
	if err := modify(small); ec2Code(err) != "IncorrectInstanceState" {
		t.Fatalf("resizing a running instance: %v", err)
	}
	if err := modify(&ec2.ModifyInstanceAttributeInput{InstanceType: &types.AttributeValue{Value: aws.String("m1.small")},
		SourceDestCheck: &types.AttributeBooleanValue{Value: aws.Bool(false)}}); ec2Code(err) != "InvalidParameterCombination" {
		t.Fatalf("two attributes at once: %v", err)
	}
	if err := modify(&ec2.ModifyInstanceAttributeInput{EbsOptimized: &types.AttributeBooleanValue{Value: aws.Bool(true)}}); ec2Code(err) != "UnsupportedOperation" {
		t.Fatalf("ebsOptimized: %v", err)
	}

	// Source/destination checks and groups change while running.
	if err := modify(&ec2.ModifyInstanceAttributeInput{SourceDestCheck: &types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	if v := aws.ToBool(attr(types.InstanceAttributeNameSourceDestCheck).SourceDestCheck.Value); v {
		t.Fatal("sourceDestCheck still true")
	}
	if err := modify(&ec2.ModifyInstanceAttributeInput{SourceDestCheck: &types.AttributeBooleanValue{Value: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if v := aws.ToBool(attr(types.InstanceAttributeNameSourceDestCheck).SourceDestCheck.Value); !v {
		t.Fatal("sourceDestCheck still false")
	}
	sg, err := cli.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("alt"), Description: aws.String("alt")})
	if err != nil {
		t.Fatal(err)
	}
	if err := modify(&ec2.ModifyInstanceAttributeInput{Groups: []string{aws.ToString(sg.GroupId)}}); err != nil {
		t.Fatal(err)
	}
	if g := attr(types.InstanceAttributeNameGroupSet).Groups; len(g) != 1 || aws.ToString(g[0].GroupId) != aws.ToString(sg.GroupId) || aws.ToString(g[0].GroupName) != "alt" {
		t.Fatalf("groups %+v", g)
	}

	// Stopped: the type (a resize, the instance staying stopped) and
	// the user data change; starting confirms the resize.
	if _, err := cli.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	stopped := ec2.NewInstanceStoppedWaiter(cli, fastWaits(func(o *ec2.InstanceStoppedWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := stopped.Wait(ctx, ids, time.Minute); err != nil {
		t.Fatalf("waiting for stopped: %v", err)
	}
	if err := modify(&ec2.ModifyInstanceAttributeInput{UserData: &types.SecureBlobAttributeValue{Value: []byte("#cloud-config\n")}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := base64.StdEncoding.DecodeString(aws.ToString(attr(types.InstanceAttributeNameUserData).UserData.Value)); string(v) != "#cloud-config\n" {
		t.Fatalf("user data %q", v)
	}
	if err := modify(small); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the resize done", func() error {
		d, err := cli.DescribeInstances(ctx, ids)
		if err != nil {
			return err
		}
		inst := d.Reservations[0].Instances[0]
		if inst.InstanceType != "m1.small" || inst.State.Name != types.InstanceStateNameStopped {
			return fmt.Errorf("%s %s", inst.InstanceType, inst.State.Name)
		}
		// Started once the resize reached its end (VERIFY_RESIZE).
		if _, err := cli.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{id}}); err != nil {
			return err
		}
		return nil
	})
	if err := running.Wait(ctx, ids, time.Minute); err != nil {
		t.Fatalf("waiting for running after the resize: %v", err)
	}
	if v := aws.ToString(attr(types.InstanceAttributeNameInstanceType).InstanceType.Value); v != "m1.small" {
		t.Fatalf("instance type after the resize %q", v)
	}
	if _, err := cli.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
}
