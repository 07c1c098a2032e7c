package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestEC2VolumesWithTheGoSDK drives EC2's volume actions with the AWS
// SDK against an agent that is a storage host: create with tags, the
// SDK's waiters (available, in-use, snapshot completed, deleted),
// attach and detach through the instance's agent, snapshots and a
// volume made from one, filters, pagination, tags on volumes and
// snapshots, and EC2's error codes for each refusal.
func TestEC2VolumesWithTheGoSDK(t *testing.T) {
	t.Parallel()
	r := newEC2VolumeRun(t)
	volID := r.createTagged()
	r.attach(volID)
	snapID, restoredID := r.snapshot(volID)
	r.tags(volID, snapID)
	r.clientTokenAndPages()
	r.detachAndDelete(volID, restoredID, snapID)
}

// ec2VolumeRun is the cloud, client and running instance of
// TestEC2VolumesWithTheGoSDK, whose steps are its methods.
type ec2VolumeRun struct {
	t         *testing.T
	ctx       context.Context
	a         *Agent
	cli       *ec2.Client
	admin     string
	inst      string
	available *ec2.VolumeAvailableWaiter
}

// newEC2VolumeRun starts a storage agent and runs an instance.
func newEC2VolumeRun(t *testing.T) *ec2VolumeRun {
	a, _ := volumeAgent(t)
	ctx := context.Background()
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	userID, projectID := whoami(t, a, demo)
	cli := ec2Client(a, ec2Credential(t, a, demo, userID, projectID))
	waits := func(o *ec2.VolumeAvailableWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 500*time.Millisecond
	}

	run, err := cli.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String("ami-6a9b7e2c5d1f4c3b9"), InstanceType: "m1.tiny",
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	inst := aws.ToString(run.Instances[0].InstanceId)
	running := ec2.NewInstanceRunningWaiter(cli, fastWaits(func(o *ec2.InstanceRunningWaiterOptions, lo, hi time.Duration) { o.MinDelay, o.MaxDelay = lo, hi }))
	if err := running.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{inst}}, 2*time.Minute); err != nil {
		t.Fatalf("waiting for running: %v", err)
	}
	return &ec2VolumeRun{t: t, ctx: ctx, a: a, cli: cli, admin: admin, inst: inst, available: ec2.NewVolumeAvailableWaiter(cli, waits)}
}

// createTagged creates a tagged volume and waits for it; EC2's refusals
// of bad creates and unknown ids.
func (r *ec2VolumeRun) createTagged() string {
	t, ctx, cli, a, available := r.t, r.ctx, r.cli, r.a, r.available
	// A volume with tags: its Name is the Cinder name, the rest metadata.
	vol, err := cli.CreateVolume(ctx, &ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String(a.config.AZ),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeVolume,
			Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("data")}, {Key: aws.String("tier"), Value: aws.String("db")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	volID := aws.ToString(vol.VolumeId)
	if vol.State != types.VolumeStateCreating || aws.ToInt32(vol.Size) != 1 || vol.VolumeType != "standard" || len(vol.Tags) != 2 {
		t.Fatalf("created %+v", vol)
	}
	if err := available.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}, time.Minute); err != nil {
		t.Fatalf("waiting for available: %v", err)
	}
	for _, c := range []struct {
		in   *ec2.CreateVolumeInput
		code string
	}{
		{&ec2.CreateVolumeInput{AvailabilityZone: aws.String(a.config.AZ)}, "MissingParameter"},
		{&ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String("nowhere")}, "InvalidZone.NotFound"},
		{&ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String(a.config.AZ), VolumeType: "io2"}, "InvalidParameterValue"},
		{&ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String(a.config.AZ), Encrypted: aws.Bool(true)}, "UnsupportedOperation"},
	} {
		if _, err := cli.CreateVolume(ctx, c.in); ec2Code(err) != c.code {
			t.Errorf("create %+v: %v, want %s", c.in, err, c.code)
		}
	}
	if _, err := cli.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{"vol-0123456789abcdef0"}}); ec2Code(err) != "InvalidVolume.NotFound" {
		t.Fatalf("an unknown volume: %v", err)
	}
	if _, err := cli.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{"vol-xyz"}}); ec2Code(err) != "InvalidVolumeID.Malformed" {
		t.Fatalf("a malformed id: %v", err)
	}
	return volID
}

// attach attaches volID to the instance, with the refusals of a
// second attach, a device in use, a delete and a detach.
func (r *ec2VolumeRun) attach(volID string) {
	t, ctx, cli, a, inst, available := r.t, r.ctx, r.cli, r.a, r.inst, r.available
	// Attach: attaching, then in-use once the instance's agent plugged
	// it in; an attached volume is not attached again or deleted.
	att, err := cli.AttachVolume(ctx, &ec2.AttachVolumeInput{VolumeId: aws.String(volID), InstanceId: aws.String(inst), Device: aws.String("/dev/sdf")})
	if err != nil || aws.ToString(att.Device) != "/dev/sdf" || aws.ToString(att.InstanceId) != inst {
		t.Fatalf("attach %+v %v", att, err)
	}
	inUse := ec2.NewVolumeInUseWaiter(cli, func(o *ec2.VolumeInUseWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 500*time.Millisecond
	})
	if err := inUse.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}, time.Minute); err != nil {
		t.Fatalf("waiting for in-use: %v", err)
	}
	waitFor(t, "the attachment attached", func() error {
		d, err := cli.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: []types.Filter{
			{Name: aws.String("attachment.instance-id"), Values: []string{inst}}, {Name: aws.String("attachment.status"), Values: []string{"attached"}}}})
		if err != nil || len(d.Volumes) != 1 || aws.ToString(d.Volumes[0].Attachments[0].Device) != "/dev/sdf" {
			return fmt.Errorf("attached volumes %+v %v", d, err)
		}
		return nil
	})
	other, err := cli.CreateVolume(ctx, &ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String(a.config.AZ)})
	if err != nil {
		t.Fatal(err)
	}
	if err := available.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{aws.ToString(other.VolumeId)}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.AttachVolume(ctx, &ec2.AttachVolumeInput{VolumeId: aws.String(volID), InstanceId: aws.String(inst), Device: aws.String("/dev/sdg")}); ec2Code(err) != "VolumeInUse" {
		t.Fatalf("attaching an attached volume: %v", err)
	}
	if _, err := cli.AttachVolume(ctx, &ec2.AttachVolumeInput{VolumeId: other.VolumeId, InstanceId: aws.String(inst), Device: aws.String("/dev/sdf")}); ec2Code(err) != "InvalidParameterValue" {
		t.Fatalf("attaching at a device in use: %v", err)
	}
	if _, err := cli.DeleteVolume(ctx, &ec2.DeleteVolumeInput{VolumeId: aws.String(volID)}); ec2Code(err) != "VolumeInUse" {
		t.Fatalf("deleting an attached volume: %v", err)
	}
	if _, err := cli.DetachVolume(ctx, &ec2.DetachVolumeInput{VolumeId: other.VolumeId}); ec2Code(err) != "IncorrectState" {
		t.Fatalf("detaching a detached volume: %v", err)
	}
}

// snapshot snapshots the in-use volume and makes a volume of it.
func (r *ec2VolumeRun) snapshot(volID string) (snapID, restoredID string) {
	t, ctx, cli, a, available := r.t, r.ctx, r.cli, r.a, r.available
	// A snapshot of the in-use volume, and a volume made from it.
	snap, err := cli.CreateSnapshot(ctx, &ec2.CreateSnapshotInput{VolumeId: aws.String(volID), Description: aws.String("nightly"),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeSnapshot, Tags: []types.Tag{{Key: aws.String("kind"), Value: aws.String("nightly")}}}}})
	if err != nil || snap.State != types.SnapshotStatePending || aws.ToString(snap.VolumeId) != volID {
		t.Fatalf("snapshot %+v %v", snap, err)
	}
	snapID = aws.ToString(snap.SnapshotId)
	completed := ec2.NewSnapshotCompletedWaiter(cli, func(o *ec2.SnapshotCompletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 500*time.Millisecond
	})
	if err := completed.Wait(ctx, &ec2.DescribeSnapshotsInput{SnapshotIds: []string{snapID}}, time.Minute); err != nil {
		t.Fatalf("waiting for the snapshot: %v", err)
	}
	mine, err := cli.DescribeSnapshots(ctx, &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"}, Filters: []types.Filter{{Name: aws.String("tag:kind"), Values: []string{"nightly"}}}})
	if err != nil || len(mine.Snapshots) != 1 || aws.ToString(mine.Snapshots[0].Description) != "nightly" || aws.ToString(mine.Snapshots[0].Progress) != "100%" {
		t.Fatalf("the project's snapshots %+v %v", mine, err)
	}
	restored, err := cli.CreateVolume(ctx, &ec2.CreateVolumeInput{SnapshotId: aws.String(snapID), AvailabilityZone: aws.String(a.config.AZ)})
	if err != nil || aws.ToInt32(restored.Size) != 1 || aws.ToString(restored.SnapshotId) != snapID {
		t.Fatalf("a volume from the snapshot %+v %v", restored, err)
	}
	if err := available.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{aws.ToString(restored.VolumeId)}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	return snapID, aws.ToString(restored.VolumeId)
}

// tags tags and untags the volume and the snapshot; another project
// sees neither.
func (r *ec2VolumeRun) tags(volID, snapID string) {
	t, ctx, cli, a, inst, admin := r.t, r.ctx, r.cli, r.a, r.inst, r.admin
	// Tags on volumes and snapshots, beside the instance's.
	if _, err := cli.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{volID, snapID, inst},
		Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}}); err != nil {
		t.Fatal(err)
	}
	tags, err := cli.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []types.Filter{{Name: aws.String("key"), Values: []string{"env"}}}})
	if err != nil || len(tags.Tags) != 3 {
		t.Fatalf("env tags %+v %v", tags, err)
	}
	if _, err := cli.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{volID}, Tags: []types.Tag{{Key: aws.String("Name")}, {Key: aws.String("env")}}}); err != nil {
		t.Fatal(err)
	}
	if d, err := cli.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}); err != nil || len(d.Volumes[0].Tags) != 1 || aws.ToString(d.Volumes[0].Tags[0].Key) != "tier" {
		t.Fatalf("tags after the delete %+v %v", d, err)
	}
	status, err := cli.DescribeVolumeStatus(ctx, &ec2.DescribeVolumeStatusInput{VolumeIds: []string{volID}})
	if err != nil || len(status.VolumeStatuses) != 1 || status.VolumeStatuses[0].VolumeStatus.Status != types.VolumeStatusInfoStatusOk {
		t.Fatalf("volume status %+v %v", status, err)
	}

	// Another project sees none of them.
	stranger := ec2Client(a, otherProjectUser(t, a, admin))
	if _, err := stranger.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}); ec2Code(err) != "InvalidVolume.NotFound" {
		t.Fatalf("another project's volume: %v", err)
	}
	if _, err := stranger.DeleteSnapshot(ctx, &ec2.DeleteSnapshotInput{SnapshotId: aws.String(snapID)}); ec2Code(err) != "InvalidSnapshot.NotFound" {
		t.Fatalf("another project's snapshot: %v", err)
	}
}

// clientTokenAndPages: CreateVolume's ClientToken, and six volumes
// paged by five.
func (r *ec2VolumeRun) clientTokenAndPages() {
	t, ctx, cli, a := r.t, r.ctx, r.cli, r.a
	// A retry with the ClientToken answers the same volume; the token
	// with other parameters is refused.
	tokened := &ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String(a.config.AZ), ClientToken: aws.String("vol-token-1")}
	first, err := cli.CreateVolume(ctx, tokened)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := cli.CreateVolume(ctx, tokened); err != nil || aws.ToString(again.VolumeId) != aws.ToString(first.VolumeId) || len(again.Tags) != 0 {
		t.Fatalf("a retry with the client token: %+v %v", again, err)
	}
	tokened.Size = aws.Int32(2)
	if _, err := cli.CreateVolume(ctx, tokened); ec2Code(err) != "IdempotentParameterMismatch" {
		t.Fatalf("the client token with another size: %v", err)
	}

	// Pagination: six volumes are two pages of at most five.
	for range 2 {
		if _, err := cli.CreateVolume(ctx, &ec2.CreateVolumeInput{Size: aws.Int32(1), AvailabilityZone: aws.String(a.config.AZ)}); err != nil {
			t.Fatal(err)
		}
	}
	pages := ec2.NewDescribeVolumesPaginator(cli, &ec2.DescribeVolumesInput{MaxResults: aws.Int32(5)})
	seen, npages := map[string]bool{}, 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		npages++
		for _, v := range page.Volumes {
			seen[aws.ToString(v.VolumeId)] = true
		}
	}
	if len(seen) != 6 || npages != 2 {
		t.Fatalf("paged through %d volumes in %d pages, want 6 in 2", len(seen), npages)
	}
}

// detachAndDelete detaches and deletes everything, the snapshot
// keeping its volume until it is gone.
func (r *ec2VolumeRun) detachAndDelete(volID, restoredID, snapID string) {
	t, ctx, cli, inst, available := r.t, r.ctx, r.cli, r.inst, r.available
	// Detach, then delete: the snapshot keeps its volume until it goes.
	det, err := cli.DetachVolume(ctx, &ec2.DetachVolumeInput{VolumeId: aws.String(volID), InstanceId: aws.String(inst)})
	if err != nil || det.State != types.VolumeAttachmentStateDetaching {
		t.Fatalf("detach %+v %v", det, err)
	}
	if err := available.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}, time.Minute); err != nil {
		t.Fatalf("waiting for the detach: %v", err)
	}
	if _, err := cli.DeleteVolume(ctx, &ec2.DeleteVolumeInput{VolumeId: aws.String(volID)}); ec2Code(err) != "IncorrectState" {
		t.Fatalf("deleting a volume with a snapshot: %v", err)
	}
	deleted := ec2.NewVolumeDeletedWaiter(cli, func(o *ec2.VolumeDeletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 500*time.Millisecond
	})
	if _, err := cli.DeleteVolume(ctx, &ec2.DeleteVolumeInput{VolumeId: aws.String(restoredID)}); err != nil {
		t.Fatal(err)
	}
	if err := deleted.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{restoredID}}, time.Minute); err != nil {
		t.Fatalf("waiting for the deletion: %v", err)
	}
	if _, err := cli.DeleteSnapshot(ctx, &ec2.DeleteSnapshotInput{SnapshotId: aws.String(snapID)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the snapshot gone", func() error {
		if _, err := cli.DeleteVolume(ctx, &ec2.DeleteVolumeInput{VolumeId: aws.String(volID)}); err != nil {
			return err
		}
		return nil
	})
	if err := deleted.Wait(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}, time.Minute); err != nil {
		t.Fatalf("waiting for the deletion: %v", err)
	}
}
