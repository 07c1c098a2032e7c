package structs

import "fmt"

// A server created with block devices that make new volumes (Nova's
// block_device_mapping_v2 with source image, snapshot or blank and
// destination volume) is stored in the entry that makes those volumes,
// in BUILD and block_device_mapping, with a VolumeBuild: its volumes'
// storage hosts make them and report, and the report that leaves the
// last one available releases the instance to the scheduler
// (VolumeBuild.Eval); one that ends in error, or the leader's timeout
// (VolumeBuildTimeoutEntry), puts it in ERROR with Nova's fault.

// Block device sources of a volume the create makes (BlockDevice.Source).
const (
	BlockSourceImage    = "image"
	BlockSourceSnapshot = "snapshot"
	BlockSourceBlank    = "blank"
)

// TaskBlockDeviceMapping is Nova's task state while the volumes of a
// server being built are made.
const TaskBlockDeviceMapping = "block_device_mapping"

// VolumeBuildPollSeconds is Nova's block_device_allocate_retries_interval
// default: its fault counts the polls a wait of that many seconds
// made, which Stratus, told of each volume by its storage host's
// report rather than polling, counts the same way.
const VolumeBuildPollSeconds = 3

// VolumeBuild is an instance waiting for the volumes made for it.
type VolumeBuild struct {
	// Eval is the instance's evaluation, committed (and announced to
	// the broker) by the entry that finds every volume available.
	Eval *Evaluation
	// StartedAt is when the wait began (the create's time, unix
	// nanoseconds), for the fault's seconds and the leader's timeout.
	StartedAt int64
}

// Copy returns a deep copy.
func (b *VolumeBuild) Copy() *VolumeBuild {
	if b == nil {
		return nil
	}
	c := *b
	c.Eval = b.Eval.Copy()
	return &c
}

// VolumeMadeFor marks a volume a server create made, until it is
// attached to that server or the build ends: then a volume whose
// mapping said delete_on_termination is deleted, as Nova's
// _cleanup_volumes deletes it when a build is aborted.
type VolumeMadeFor struct {
	InstanceID          string
	DeleteOnTermination bool `json:",omitempty"`
}

// VolumeBuildTimeoutEntry fails the builds of instances whose volumes
// were not all made within Limit (unix nanoseconds) of their start, at
// At (the leader's clock, chosen before proposal). The FSM checks both
// again: an instance released or failed meanwhile is left alone.
type VolumeBuildTimeoutEntry struct {
	InstanceIDs []string
	At          int64
	Limit       int64
}

// VolumeNotCreatedMessage is Nova's VolumeNotCreated text, which its
// build abort carries as the instance's fault: seconds is how long the
// wait lasted, status the volume's status when it ended.
func VolumeNotCreatedMessage(volumeID string, seconds int64, status string) string {
	return fmt.Sprintf("Volume %s did not finish being created even after we waited %d seconds or %d attempts. And its status is %s.",
		volumeID, seconds, seconds/VolumeBuildPollSeconds+1, status)
}

// BuildAbortedMessage is Nova's BuildAbortException text.
func BuildAbortedMessage(instanceID, reason string) string {
	return fmt.Sprintf("Build of instance %s aborted: %s", instanceID, reason)
}
