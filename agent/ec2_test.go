package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

// ec2Client is the AWS SDK's EC2 client for a credential, pointed at an
// agent's /ec2/ with the agent's region.
func ec2Client(a *Agent, c s3Cred, tweak ...func(*ec2.Options)) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       a.config.Region,
		BaseEndpoint: aws.String(a.url("/ec2/")),
		Credentials:  awscreds.NewStaticCredentialsProvider(c.Access, c.Secret, ""),
		// Failures are the test's to see, not the SDK's to retry.
		RetryMaxAttempts: 1,
	}, tweak...)
}

// ec2Code is the EC2 error code of err.
func ec2Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return fmt.Sprintf("not an API error: %v", err)
}

// fastWaits makes the SDK's waiters poll at test speed.
func fastWaits[O any](set func(*O, time.Duration, time.Duration)) func(*O) {
	return func(o *O) { set(o, 50*time.Millisecond, 500*time.Millisecond) }
}

func TestEC2WithTheGoSDK(t *testing.T) {
	t.Parallel()
	on := true
	a := testAgent(t, func(c *Config) { c.ACL = &ACLConfig{Enabled: &on} })
	ctx := context.Background()
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	userID, projectID := whoami(t, a, demo)
	cred := ec2Credential(t, a, demo, userID, projectID)
	cli := ec2Client(a, cred)

	// The catalog.
	regions, err := cli.DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	if err != nil || len(regions.Regions) != 1 || aws.ToString(regions.Regions[0].RegionName) != a.config.Region {
		t.Fatalf("regions %+v %v", regions, err)
	}
	// The endpoint without its trailing slash is served as it is.
	noSlash := ec2Client(a, cred, func(o *ec2.Options) { o.BaseEndpoint = aws.String(a.url("/ec2")) })
	if zones, err := noSlash.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil || len(zones.AvailabilityZones) == 0 {
		t.Fatalf("zones at /ec2: %+v %v", zones, err)
	}
	images, err := cli.DescribeImages(ctx, &ec2.DescribeImagesInput{})
	if err != nil {
		t.Fatal(err)
	}
	ami := ""
	for _, img := range images.Images {
		if aws.ToString(img.ImageId) == "ami-"+"6a9b7e2c5d1f4c3b9" {
			ami = aws.ToString(img.ImageId)
		}
	}
	if ami == "" {
		t.Fatalf("the dev image is not listed as ami-6a9b7e2c5d1f4c3b9: %+v", images.Images)
	}
	types_, err := cli.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []types.InstanceType{"m1.tiny"}})
	if err != nil || len(types_.InstanceTypes) != 1 || aws.ToInt32(types_.InstanceTypes[0].VCpuInfo.DefaultVCpus) != 1 {
		t.Fatalf("instance types %+v %v", types_, err)
	}

	// Key pairs: one made by the API, one imported.
	made, err := cli.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String("made")})
	if err != nil || !strings.Contains(aws.ToString(made.KeyMaterial), "BEGIN RSA PRIVATE KEY") {
		t.Fatalf("create key pair %+v %v", made, err)
	}
	if _, err := cli.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String("made")}); ec2Code(err) != "InvalidKeyPair.Duplicate" {
		t.Fatalf("a second key pair of that name: %v", err)
	}
	pub := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFJqPp8z1Xl5rj0Kq3y0JkH3mB2Q9nX8o6Zr9sYQbBQb test"
	imported, err := cli.ImportKeyPair(ctx, &ec2.ImportKeyPairInput{KeyName: aws.String("imported"), PublicKeyMaterial: []byte(pub)})
	if err != nil || aws.ToString(imported.KeyFingerprint) == "" {
		t.Fatalf("import %+v %v", imported, err)
	}
	keys, err := cli.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{})
	if err != nil || len(keys.KeyPairs) != 2 {
		t.Fatalf("key pairs %+v %v", keys, err)
	}
	if _, err := cli.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{KeyNames: []string{"nope"}}); ec2Code(err) != "InvalidKeyPair.NotFound" {
		t.Fatalf("describe a missing key pair: %v", err)
	}
	if _, err := cli.DeleteKeyPair(ctx, &ec2.DeleteKeyPairInput{KeyName: aws.String("imported")}); err != nil {
		t.Fatal(err)
	}

	// Run three instances with tags, a key and a client token; a retry with
	// the token answers the same instances.
	run := &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: "m1.tiny", MinCount: aws.Int32(1), MaxCount: aws.Int32(6),
		ClientToken: aws.String("ec2-test-token"), KeyName: aws.String("made"),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeInstance,
			Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("web")}, {Key: aws.String("tier"), Value: aws.String("front")}}}}}
	out, err := cli.RunInstances(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 6 {
		t.Fatalf("ran %d instances", len(out.Instances))
	}
	again, err := cli.RunInstances(ctx, run)
	if err != nil || len(again.Instances) != 6 || aws.ToString(again.Instances[0].InstanceId) != aws.ToString(out.Instances[0].InstanceId) {
		t.Fatalf("a retry with the client token: %+v %v", again, err)
	}
	mismatch := *run
	mismatch.InstanceType = "m1.small"
	if _, err := cli.RunInstances(ctx, &mismatch); ec2Code(err) != "IdempotentParameterMismatch" {
		t.Fatalf("the client token with other parameters: %v", err)
	}
	var ids []string
	for _, inst := range out.Instances {
		ids = append(ids, aws.ToString(inst.InstanceId))
	}
	running := ec2.NewInstanceRunningWaiter(cli, fastWaits(func(o *ec2.InstanceRunningWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := running.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids}, 2*time.Minute); err != nil {
		t.Fatalf("waiting for running: %v", err)
	}

	// Pagination: six instances are two pages of at most five, the
	// filters applied before the cut.
	pages := ec2.NewDescribeInstancesPaginator(cli, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5),
		Filters: []types.Filter{{Name: aws.String("tag:tier"), Values: []string{"front"}}, {Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	seen, npages := 0, 0
	for pages.HasMorePages() {
		npages++
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				seen++
				if inst.State.Name != types.InstanceStateNameRunning || string(inst.InstanceType) != "m1.tiny" || len(inst.Tags) != 2 {
					t.Fatalf("instance %+v", inst)
				}
			}
		}
	}
	if seen != 6 || npages != 2 {
		t.Fatalf("paged through %d instances in %d pages, want 6 in 2", seen, npages)
	}
	status, err := cli.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: ids[:1]})
	if err != nil || len(status.InstanceStatuses) != 1 || status.InstanceStatuses[0].InstanceState.Name != types.InstanceStateNameRunning {
		t.Fatalf("status %+v %v", status, err)
	}

	// Tags: set, read, filter, delete.
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids[:2], Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}}); err != nil {
		t.Fatal(err)
	}
	tags, err := cli.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []types.Filter{{Name: aws.String("key"), Values: []string{"env"}}}})
	if err != nil || len(tags.Tags) != 2 || aws.ToString(tags.Tags[0].Value) != "prod" {
		t.Fatalf("tags %+v %v", tags, err)
	}
	if _, err := cli.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: ids[:1], Tags: []types.Tag{{Key: aws.String("env")}}}); err != nil {
		t.Fatal(err)
	}
	prod, err := cli.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []types.Filter{{Name: aws.String("tag:env"), Values: []string{"prod"}}}})
	if err != nil || len(prod.Reservations) != 1 || len(prod.Reservations[0].Instances) != 1 ||
		aws.ToString(prod.Reservations[0].Instances[0].InstanceId) != ids[1] || aws.ToString(prod.Reservations[0].Instances[0].KeyName) != "made" {
		t.Fatalf("instances tagged env=prod: %+v %v", prod, err)
	}

	// Stop and start one.
	stop, err := cli.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[:1]})
	if err != nil || stop.StoppingInstances[0].CurrentState.Name != types.InstanceStateNameStopping {
		t.Fatalf("stop %+v %v", stop, err)
	}
	stopped := ec2.NewInstanceStoppedWaiter(cli, fastWaits(func(o *ec2.InstanceStoppedWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := stopped.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids[:1]}, time.Minute); err != nil {
		t.Fatalf("waiting for stopped: %v", err)
	}
	if _, err := cli.RebootInstances(ctx, &ec2.RebootInstancesInput{InstanceIds: ids[:1]}); ec2Code(err) != "IncorrectInstanceState" {
		t.Fatalf("rebooting a stopped instance: %v", err)
	}
	if _, err := cli.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: ids[:1]}); err != nil {
		t.Fatal(err)
	}
	if err := running.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids[:1]}, time.Minute); err != nil {
		t.Fatalf("waiting for running again: %v", err)
	}

	// An image of one, available once its host uploaded it, then
	// deregistered.
	img, err := cli.CreateImage(ctx, &ec2.CreateImageInput{InstanceId: aws.String(ids[1]), Name: aws.String("web-snap")})
	if err != nil {
		t.Fatal(err)
	}
	available := ec2.NewImageAvailableWaiter(cli, fastWaits(func(o *ec2.ImageAvailableWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := available.Wait(ctx, &ec2.DescribeImagesInput{ImageIds: []string{aws.ToString(img.ImageId)}}, time.Minute); err != nil {
		t.Fatalf("waiting for the image: %v", err)
	}
	if mine, err := cli.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}}); err != nil || len(mine.Images) != 1 || aws.ToString(mine.Images[0].Name) != "web-snap" {
		t.Fatalf("the project's own images: %+v %v", mine, err)
	}
	// The project's own image takes tags (Glance's, key=value); the
	// dev image, another project's, does not.
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(img.ImageId)},
		Tags: []types.Tag{{Key: aws.String("release"), Value: aws.String("2")}, {Key: aws.String("golden"), Value: aws.String("")}}}); err != nil {
		t.Fatal(err)
	}
	if tagged, err := cli.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []types.Filter{{Name: aws.String("tag:release"), Values: []string{"2"}}}}); err != nil ||
		len(tagged.Images) != 1 || len(tagged.Images[0].Tags) != 2 || aws.ToString(tagged.Images[0].Tags[1].Key) != "release" {
		t.Fatalf("images tagged release=2: %+v %v", tagged, err)
	}
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{ami}, Tags: []types.Tag{{Key: aws.String("x"), Value: aws.String("y")}}}); ec2Code(err) != "InvalidAMIID.NotFound" {
		t.Fatalf("tagging another project's image: %v", err)
	}
	if _, err := cli.DeregisterImage(ctx, &ec2.DeregisterImageInput{ImageId: img.ImageId}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{aws.ToString(img.ImageId)}}); ec2Code(err) != "InvalidAMIID.NotFound" {
		t.Fatalf("a deregistered image: %v", err)
	}

	// Another project's credential sees none of them and acts on none.
	other := ec2Client(a, otherProjectUser(t, a, admin))
	if _, err := other.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[:1]}); ec2Code(err) != "InvalidInstanceID.NotFound" {
		t.Fatalf("another project's stop: %v", err)
	}
	if listed, err := other.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil || len(listed.Reservations) != 0 {
		t.Fatalf("another project lists %+v %v", listed, err)
	}

	console, err := cli.GetConsoleOutput(ctx, &ec2.GetConsoleOutputInput{InstanceId: aws.String(ids[1])})
	if err != nil || aws.ToString(console.InstanceId) != ids[1] {
		t.Fatalf("console output %+v %v", console, err)
	}
	if _, err := cli.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[1:2], DryRun: aws.Bool(true)}); ec2Code(err) != "DryRunOperation" {
		t.Fatalf("a dry run: %v", err)
	}

	// Termination protection is Nova's lock.
	protect := func(on bool) {
		t.Helper()
		if _, err := cli.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(ids[2]),
			DisableApiTermination: &types.AttributeBooleanValue{Value: aws.Bool(on)}}); err != nil {
			t.Fatal(err)
		}
	}
	protect(true)
	if _, err := cli.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids[2:3]}); ec2Code(err) != "OperationNotPermitted" {
		t.Fatalf("terminating a protected instance: %v", err)
	}
	protect(false)

	// Terminate them all.
	term, err := cli.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	if err != nil || len(term.TerminatingInstances) != 6 {
		t.Fatalf("terminate %+v %v", term, err)
	}
	terminated := ec2.NewInstanceTerminatedWaiter(cli, fastWaits(func(o *ec2.InstanceTerminatedWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := terminated.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids}, time.Minute); err != nil {
		t.Fatalf("waiting for terminated: %v", err)
	}
}
