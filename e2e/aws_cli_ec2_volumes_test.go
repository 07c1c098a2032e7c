package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

type awsVolumes struct {
	Volumes []struct {
		VolumeID    string `json:"VolumeId"`
		State       string
		Size        int
		Attachments []struct {
			InstanceID string `json:"InstanceId"`
			Device     string
			State      string
		}
		Tags []struct{ Key, Value string }
	}
}

// TestAWSCLIEC2Volumes drives the EC2 volume actions with the unmodified
// AWS CLI against a dev cloud, whose host keeps a volume pool: create a
// tagged volume, attach it to an instance, snapshot it, make a volume
// of the snapshot, tag, filter, detach and delete, with EC2's error
// codes for an unknown volume and for deleting an attached one.
func TestAWSCLIEC2Volumes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed: the dev cloud keeps no volume pool")
	}
	bin, env, ec2, aws := awsEC2Dev(t, "awsvol")
	volumes := func(args ...string) awsVolumes {
		t.Helper()
		var d awsVolumes
		aws(&d, append([]string{"describe-volumes"}, args...)...)
		return d
	}
	waitVolume := func(id, state string) {
		t.Helper()
		eventually(t, id+" "+state, 90*time.Second, func() error {
			if d := volumes("--volume-ids", id); len(d.Volumes) != 1 || d.Volumes[0].State != state {
				return fmt.Errorf("%+v", d)
			}
			return nil
		})
	}

	var vol struct {
		VolumeID string `json:"VolumeId"`
		State    string
	}
	eventually(t, "the volume pool up", 60*time.Second, func() error {
		stdout, stderr, code := runCmd(t, bin, env, ec2("create-volume", "--size", "1", "--availability-zone", "nova", "--output", "json",
			"--tag-specifications", "ResourceType=volume,Tags=[{Key=Name,Value=data},{Key=tier,Value=db}]")...)
		if code != 0 {
			return fmt.Errorf("create-volume: %s %s", stdout, stderr)
		}
		return json.Unmarshal([]byte(stdout), &vol)
	})
	waitVolume(vol.VolumeID, "available")

	var images struct {
		Images []struct{ ImageID string }
	}
	aws(&images, "describe-images")
	var run struct {
		Instances []struct {
			InstanceID string `json:"InstanceId"`
		}
	}
	aws(&run, "run-instances", "--image-id", images.Images[0].ImageID, "--instance-type", "m1.tiny", "--count", "1")
	inst := run.Instances[0].InstanceID
	eventually(t, inst+" running", 90*time.Second, func() error {
		var d awsInstances
		aws(&d, "describe-instances", "--instance-ids", inst)
		if st := d.states()[inst]; st != "running" {
			return fmt.Errorf("%s is %s", inst, st)
		}
		return nil
	})

	var att struct{ Device, State string }
	aws(&att, "attach-volume", "--volume-id", vol.VolumeID, "--instance-id", inst, "--device", "/dev/sdf")
	if att.Device != "/dev/sdf" {
		t.Fatalf("attach-volume: %+v", att)
	}
	waitVolume(vol.VolumeID, "in-use")
	if _, stderr, code := runCmd(t, bin, env, ec2("delete-volume", "--volume-id", vol.VolumeID)...); code == 0 || !strings.Contains(stderr, "VolumeInUse") {
		t.Fatalf("deleting an attached volume: exit %d %s", code, stderr)
	}

	var snap struct {
		SnapshotID string `json:"SnapshotId"`
	}
	aws(&snap, "create-snapshot", "--volume-id", vol.VolumeID, "--description", "cli snapshot")
	eventually(t, "the snapshot completed", 90*time.Second, func() error {
		var d struct {
			Snapshots []struct{ State, Description string }
		}
		aws(&d, "describe-snapshots", "--owner-ids", "self", "--snapshot-ids", snap.SnapshotID)
		if len(d.Snapshots) != 1 || d.Snapshots[0].State != "completed" || d.Snapshots[0].Description != "cli snapshot" {
			return fmt.Errorf("%+v", d)
		}
		return nil
	})
	var restored struct {
		VolumeID string `json:"VolumeId"`
	}
	aws(&restored, "create-volume", "--snapshot-id", snap.SnapshotID, "--availability-zone", "nova")
	waitVolume(restored.VolumeID, "available")

	aws(nil, "create-tags", "--resources", restored.VolumeID, snap.SnapshotID, "--tags", "Key=env,Value=prod")
	if d := volumes("--filters", "Name=tag:env,Values=prod"); len(d.Volumes) != 1 || d.Volumes[0].VolumeID != restored.VolumeID {
		t.Fatalf("volumes tagged env=prod: %+v", d)
	}
	if d := volumes("--filters", "Name=attachment.instance-id,Values="+inst); len(d.Volumes) != 1 || d.Volumes[0].Attachments[0].Device != "/dev/sdf" {
		t.Fatalf("volumes attached to %s: %+v", inst, d)
	}
	var tags struct {
		Tags []struct{ ResourceType, Key, Value string }
	}
	aws(&tags, "describe-tags", "--filters", "Name=resource-type,Values=volume")
	if len(tags.Tags) != 3 { // data's Name and tier, the restored volume's env
		t.Fatalf("volume tags: %+v", tags)
	}
	if _, stderr, code := runCmd(t, bin, env, ec2("describe-volumes", "--volume-ids", "vol-0123456789abcdef0")...); code == 0 || !strings.Contains(stderr, "InvalidVolume.NotFound") {
		t.Fatalf("an unknown volume: exit %d %s", code, stderr)
	}

	aws(nil, "detach-volume", "--volume-id", vol.VolumeID)
	waitVolume(vol.VolumeID, "available")
	aws(nil, "delete-volume", "--volume-id", restored.VolumeID)
	aws(nil, "delete-snapshot", "--snapshot-id", snap.SnapshotID)
	eventually(t, "the snapshot gone", 90*time.Second, func() error {
		_, stderr, code := runCmd(t, bin, env, ec2("delete-volume", "--volume-id", vol.VolumeID)...)
		if code != 0 {
			return fmt.Errorf("delete-volume: %s", stderr)
		}
		return nil
	})
	eventually(t, "the volumes deleted", 90*time.Second, func() error {
		if d := volumes(); len(d.Volumes) != 0 {
			return fmt.Errorf("%+v", d)
		}
		return nil
	})
	aws(nil, "terminate-instances", "--instance-ids", inst)
}
