package server

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// maxMetadataItems is Nova's default metadata_items quota: how many
// metadata keys one instance may carry.
const maxMetadataItems = 128

// metadataStates are the vm_states in which Nova lets a user change an
// instance's metadata (and only with no task running).
var metadataStates = []string{structs.VMStateActive, structs.VMStatePaused, structs.VMStateSuspended, structs.VMStateStopped}

// Update changes an instance's name, description or metadata.
func (e *Instance) Update(args *structs.InstanceUpdateRequest, reply *structs.InstanceUpdateResponse) error {
	if done, err := e.srv.forward("Instance.Update", args, args, reply); done {
		return err
	}
	if err := validateInstanceUpdate(args); err != nil {
		return err
	}
	state := e.srv.fsm.State()
	inst, err := state.InstanceByID(nil, args.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q not found", args.InstanceID)
	}
	entry := &structs.InstanceUpdateEntry{
		InstanceID: inst.ID, Name: args.Name, Description: args.Description,
		ReplaceMetadata: args.ReplaceMetadata, SetMetadata: args.SetMetadata, DeleteMetadata: args.DeleteMetadata,
		Hostname: args.Hostname, KeyName: args.KeyName, ReplaceTags: args.ReplaceTags, AddTags: args.AddTags, RemoveTags: args.RemoveTags,
		AccessIPv4: args.AccessIPv4, AccessIPv6: args.AccessIPv6, AutoDiskConfig: args.AutoDiskConfig, UserData: args.UserData,
		UpdatedAt: time.Now().UnixNano(),
	}
	if args.UserData != nil {
		// Older servers would drop the field (FSMLevel).
		if l, _ := e.srv.ClusterFSMLevel(); l < structs.FSMLevelUserDataUpdate {
			return structs.Errorf(structs.KindConflict, "the user data can change once every server is upgraded (%s, the cluster is at %s)",
				structs.FSMLevelUserDataUpdate, l)
		}
	}
	if args.ChangesMetadata() {
		if err := checkMetadataChange(inst, entry); err != nil {
			return err
		}
	}
	if args.ChangesTags() {
		if err := checkTagChange(inst); err != nil {
			return err
		}
	}
	index, err := e.srv.apply(structs.InstanceUpdateType, entry)
	if err != nil {
		return err
	}
	updated, err := e.srv.fsm.State().InstanceByID(nil, inst.ID)
	if err != nil {
		return err
	}
	if updated == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q was deleted during the update", inst.ID)
	}
	reply.Instance, reply.Index = updated, index
	return nil
}

// validateInstanceUpdate checks the request's fields on their own.
func validateInstanceUpdate(args *structs.InstanceUpdateRequest) error {
	if args.InstanceID == "" {
		return structs.Errorf(structs.KindInvalid, "instance id is required")
	}
	if args.Name == nil && args.Description == nil && !args.ChangesMetadata() && args.Hostname == nil && args.KeyName == nil && !args.ChangesTags() &&
		args.AccessIPv4 == nil && args.AccessIPv6 == nil && args.AutoDiskConfig == nil && args.UserData == nil {
		return structs.Errorf(structs.KindInvalid, "instance update changes nothing")
	}
	var errs []string
	if args.Hostname != nil && !validHostname(*args.Hostname) {
		errs = append(errs, hostnameError(*args.Hostname))
	}
	errs = append(errs, accessIPErrors(args.AccessIPv4, args.AccessIPv6)...)
	for _, tag := range append(slices.Clone(args.AddTags), args.RemoveTags...) {
		if err := structs.ValidateTag(tag); err != nil {
			errs = append(errs, structs.Message(err))
		}
	}
	if args.Name != nil {
		if name := strings.TrimSpace(*args.Name); name == "" || len(*args.Name) > 255 {
			errs = append(errs, "name must be 1-255 characters")
		}
	}
	if args.Description != nil && len(*args.Description) > 255 {
		errs = append(errs, "description must be at most 255 characters")
	}
	for k, v := range args.SetMetadata {
		if k == "" || len(k) > 255 || len(v) > 255 {
			errs = append(errs, fmt.Sprintf("metadata %q: keys must be 1-255 and values 0-255 characters", k))
		}
	}
	if len(errs) > 0 {
		return structs.Errorf(structs.KindInvalid, "instance: %s", strings.Join(errs, "; "))
	}
	return nil
}

// checkMetadataChange applies Nova's rules for metadata changes: stable
// states only, and deleted keys must exist.
func checkMetadataChange(inst *structs.Instance, entry *structs.InstanceUpdateEntry) error {
	if inst.TaskState != "" {
		return structs.Errorf(structs.KindConflict, "cannot update metadata of instance %s while it is in task_state %s", inst.ID, inst.TaskState)
	}
	if !contains(metadataStates, inst.VMState) {
		return structs.Errorf(structs.KindConflict, "cannot update metadata of instance %s while it is in vm_state %s", inst.ID, inst.VMState)
	}
	after := inst.Copy()
	deletes := entry.DeleteMetadata
	entry.DeleteMetadata = nil
	entry.Apply(after)
	entry.DeleteMetadata = deletes
	for _, k := range deletes {
		if _, ok := after.Metadata[k]; !ok {
			return structs.Errorf(structs.KindNotFound, "metadata item %q of instance %s not found", k, inst.ID)
		}
		delete(after.Metadata, k)
	}
	// The project's metadata_items quota (maxMetadataItems by default)
	// is checked by the FSM as it applies the update.
	return nil
}

// hostnameLabel is one label of an RFC 1123 host name.
var hostnameLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$`)

// validHostname reports whether h is a host name (or FQDN) a guest can
// take, as Nova's 2.94 hostname rules allow.
func validHostname(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if !hostnameLabel.MatchString(label) {
			return false
		}
	}
	return true
}

// tagStates are the vm_states in which Nova lets tags change.
var tagStates = []string{structs.VMStateActive, structs.VMStatePaused, structs.VMStateRescued, structs.VMStateShelved,
	structs.VMStateShelvedOffloaded, structs.VMStateStopped, structs.VMStateSuspended}

// checkTagChange applies Nova's rule for tag changes: those vm_states,
// and no task under way.
func checkTagChange(inst *structs.Instance) error {
	if inst.TaskState != "" || inst.Task != nil {
		return structs.Errorf(structs.KindConflict, "Cannot 'update tags' instance %s while it is in task_state %s", inst.ID, inst.TaskState)
	}
	if !slices.Contains(tagStates, inst.VMState) {
		return structs.Errorf(structs.KindConflict, "Cannot 'update tags' instance %s while it is in vm_state %s", inst.ID, inst.VMState)
	}
	return nil
}

func hostnameError(h string) string {
	return fmt.Sprintf("hostname %q must be a valid host name (dot-separated labels of letters, digits, '-' and '_', at most 63 characters each and 255 in all)", h)
}
