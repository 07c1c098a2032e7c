package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireAWSCLI is Debian's AWS CLI (package awscli, which
// scripts/ci-deps.sh installs), else whatever `aws` is on the path.
func requireAWSCLI(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/aws"); err == nil {
		return "/usr/bin/aws"
	}
	return requireCLI(t, "aws")
}

// awsJSON runs the AWS CLI with env and decodes its JSON answer.
func awsJSON(t *testing.T, bin string, env []string, out any, args ...string) {
	t.Helper()
	stdout, stderr, code := runCmd(t, bin, env, append(args, "--output", "json")...)
	if code != 0 {
		t.Fatalf("aws %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	if out != nil && strings.TrimSpace(stdout) != "" {
		if err := json.Unmarshal([]byte(stdout), out); err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stdout)
		}
	}
}

// ec2Env is the environment `cloudctl openrc -format ec2 --user USER`
// exports, with the AWS CLI kept from reading the host's own files.
func ec2Env(t *testing.T, agentHTTP, user string) []string {
	t.Helper()
	out, errOut, code := cli(t, agentHTTP, "openrc", "-format", "ec2", "--user", user)
	if code != 0 {
		t.Fatalf("cloudctl openrc -format ec2: %s", errOut)
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "AWS_CONFIG_FILE="+filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"), "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1")
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		kv, ok := strings.CutPrefix(line, "export ")
		if !ok {
			t.Fatalf("openrc line %q", line)
		}
		k, v, _ := strings.Cut(kv, "=")
		seen[k] = true
		env = append(env, k+"="+strings.Trim(v, "'"))
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_EC2"} {
		if !seen[k] {
			t.Fatalf("openrc -format ec2 printed no %s:\n%s", k, out)
		}
	}
	return env
}

type awsInstances struct {
	Reservations []struct {
		Instances []struct {
			InstanceID string `json:"InstanceId"`
			State      struct{ Name string }
			Tags       []struct{ Key, Value string }
		}
	}
}

// states is each instance's state name, by id.
func (d awsInstances) states() map[string]string {
	out := map[string]string{}
	for _, r := range d.Reservations {
		for _, i := range r.Instances {
			out[i.InstanceID] = i.State.Name
		}
	}
	return out
}

// awsEC2Dev starts a dev agent and returns the AWS CLI, its environment
// for the demo user (`cloudctl openrc -format ec2`), the arguments of
// an `aws ec2` command against the agent, and a runner that decodes an
// `aws ec2` command's JSON answer (failing the test on an error).
func awsEC2Dev(t *testing.T, name string) (bin string, env []string, ec2 func(...string) []string, aws func(any, ...string)) {
	t.Helper()
	bin = requireAWSCLI(t)
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatal(err)
	}
	dev := startAgent(t, name, "--dev")
	eventually(t, "identity seeded", 60*time.Second, func() error {
		out, errOut, code := cli(t, dev.http, "openrc", "-format", "ec2", "--user", "demo")
		if code != 0 {
			return fmt.Errorf("openrc: %s %s", out, errOut)
		}
		return nil
	})
	env = ec2Env(t, dev.http, "demo")
	// Debian's AWS CLI (2.9) predates AWS_ENDPOINT_URL_EC2: the endpoint
	// goes on the command line, as --endpoint-url.
	endpoint := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AWS_ENDPOINT_URL_EC2="); ok {
			endpoint = v
		}
	}
	ec2 = func(args ...string) []string { return append([]string{"--endpoint-url", endpoint, "ec2"}, args...) }
	aws = func(out any, args ...string) {
		t.Helper()
		awsJSON(t, bin, env, out, ec2(args...)...)
	}
	return bin, env, ec2, aws
}

// TestAWSCLIEC2 drives the EC2 API with the unmodified AWS CLI, its
// endpoint and credential from `cloudctl openrc -format ec2`: key pairs,
// run, describe with filters, stop, start, tags, security groups,
// elastic IPs, terminate, and EC2's error codes.
func TestAWSCLIEC2(t *testing.T) {
	t.Parallel()
	bin, env, ec2, aws := awsEC2Dev(t, "awsec2")

	var images struct {
		Images []struct{ ImageID, Name string }
	}
	eventually(t, "the dev image listed", 60*time.Second, func() error {
		images.Images = nil
		aws(&images, "describe-images")
		if len(images.Images) == 0 {
			return fmt.Errorf("no images")
		}
		return nil
	})
	ami := images.Images[0].ImageID

	var key struct{ KeyName, KeyMaterial string }
	aws(&key, "create-key-pair", "--key-name", "cli-key")
	if !strings.Contains(key.KeyMaterial, "PRIVATE KEY") {
		t.Fatalf("create-key-pair: %+v", key)
	}
	var keys struct{ KeyPairs []struct{ KeyName string } }
	aws(&keys, "describe-key-pairs")
	if len(keys.KeyPairs) != 1 || keys.KeyPairs[0].KeyName != "cli-key" {
		t.Fatalf("describe-key-pairs: %+v", keys)
	}

	var run struct {
		Instances []struct {
			InstanceID string `json:"InstanceId"`
		}
	}
	eventually(t, "a boot accepted", 60*time.Second, func() error {
		stdout, stderr, code := runCmd(t, bin, env, ec2("run-instances", "--image-id", ami, "--instance-type", "m1.tiny",
			"--count", "2", "--key-name", "cli-key", "--client-token", "cli-run-1", "--output", "json",
			"--tag-specifications", "ResourceType=instance,Tags=[{Key=Name,Value=cli},{Key=team,Value=blue}]")...)
		if code != 0 {
			return fmt.Errorf("run-instances: %s %s", stdout, stderr)
		}
		return json.Unmarshal([]byte(stdout), &run)
	})
	if len(run.Instances) != 2 {
		t.Fatalf("run-instances: %+v", run)
	}
	ids := []string{run.Instances[0].InstanceID, run.Instances[1].InstanceID}
	waitStates := func(want string, ids ...string) {
		t.Helper()
		eventually(t, "instances "+want, 90*time.Second, func() error {
			var d awsInstances
			aws(&d, append([]string{"describe-instances", "--instance-ids"}, ids...)...)
			for id, st := range d.states() {
				if st != want {
					return fmt.Errorf("%s is %s", id, st)
				}
			}
			return nil
		})
	}
	waitStates("running", ids...)

	var blue awsInstances
	aws(&blue, "describe-instances", "--filters", "Name=tag:team,Values=blue", "Name=instance-state-name,Values=running")
	if len(blue.states()) != 2 {
		t.Fatalf("filtered describe-instances: %+v", blue)
	}

	aws(nil, "stop-instances", "--instance-ids", ids[0])
	waitStates("stopped", ids[0])
	aws(nil, "start-instances", "--instance-ids", ids[0])
	waitStates("running", ids[0])
	aws(nil, "reboot-instances", "--instance-ids", ids[1])

	aws(nil, "create-tags", "--resources", ids[0], "--tags", "Key=env,Value=prod")
	var tags struct {
		Tags []struct{ ResourceID, Key, Value string }
	}
	aws(&tags, "describe-tags", "--filters", "Name=key,Values=env")
	if len(tags.Tags) != 1 || tags.Tags[0].Value != "prod" {
		t.Fatalf("describe-tags: %+v", tags)
	}

	// A security group and an elastic IP.
	var sg struct {
		GroupID string `json:"GroupId"`
	}
	aws(&sg, "create-security-group", "--group-name", "cli-web", "--description", "web servers")
	aws(nil, "authorize-security-group-ingress", "--group-id", sg.GroupID, "--protocol", "tcp", "--port", "443", "--cidr", "0.0.0.0/0")
	var groups struct {
		SecurityGroups []struct {
			GroupName     string
			IPPermissions []struct{ FromPort int } `json:"IpPermissions"`
		}
	}
	aws(&groups, "describe-security-groups", "--group-ids", sg.GroupID)
	if len(groups.SecurityGroups) != 1 || len(groups.SecurityGroups[0].IPPermissions) != 1 || groups.SecurityGroups[0].IPPermissions[0].FromPort != 443 {
		t.Fatalf("describe-security-groups: %+v", groups)
	}
	aws(nil, "revoke-security-group-ingress", "--group-id", sg.GroupID, "--protocol", "tcp", "--port", "443", "--cidr", "0.0.0.0/0")
	aws(nil, "delete-security-group", "--group-id", sg.GroupID)

	var eip struct{ PublicIP, AllocationID string }
	aws(&eip, "allocate-address", "--domain", "vpc")
	if eip.AllocationID == "" {
		t.Fatalf("allocate-address: %+v", eip)
	}
	var assoc struct{ AssociationID string }
	aws(&assoc, "associate-address", "--allocation-id", eip.AllocationID, "--instance-id", ids[0])
	var addrs struct {
		Addresses []struct{ InstanceID, PublicIP string }
	}
	aws(&addrs, "describe-addresses")
	if len(addrs.Addresses) != 1 || addrs.Addresses[0].InstanceID != ids[0] {
		t.Fatalf("describe-addresses: %+v", addrs)
	}
	aws(nil, "disassociate-address", "--association-id", assoc.AssociationID)
	aws(nil, "release-address", "--allocation-id", eip.AllocationID)

	// EC2's error codes reach the CLI.
	if _, stderr, code := runCmd(t, bin, env, ec2("describe-instances", "--instance-ids", "i-0123456789abcdef0")...); code == 0 || !strings.Contains(stderr, "InvalidInstanceID.NotFound") {
		t.Fatalf("an unknown instance: exit %d %s", code, stderr)
	}
	bad := append(append([]string{}, env...), "AWS_SECRET_ACCESS_KEY=wrong")
	if _, stderr, code := runCmd(t, bin, bad, ec2("describe-instances")...); code == 0 || !strings.Contains(stderr, "SignatureDoesNotMatch") {
		t.Fatalf("a wrong secret: exit %d %s", code, stderr)
	}

	aws(nil, "terminate-instances", "--instance-ids", ids[0], ids[1])
	waitStates("terminated", ids...)
	aws(nil, "delete-key-pair", "--key-name", "cli-key")
}
