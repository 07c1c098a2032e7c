package structs

import "slices"

// InstanceUpdateRequest changes the user-editable fields of an instance:
// its name, description and metadata. Nil pointers leave a field as it
// is. Metadata changes apply in order: ReplaceMetadata (drop every key
// first), then SetMetadata, then DeleteMetadata.
type InstanceUpdateRequest struct {
	InstanceID  string
	Name        *string
	Description *string

	ReplaceMetadata bool
	SetMetadata     map[string]string
	// DeleteMetadata names keys to remove; each must exist.
	DeleteMetadata []string
	// Hostname sets the guest's host name.
	Hostname *string
	// KeyName sets the instance's key pair ("" for none), as a rebuild
	// with key_name does (2.54); the caller checked the key exists.
	KeyName *string
	// ReplaceTags replaces the tags with AddTags; otherwise AddTags are
	// added and RemoveTags (each must exist) removed.
	ReplaceTags bool
	AddTags     []string
	RemoveTags  []string
	// AccessIPv4 and AccessIPv6 set the recorded access addresses
	// ("" clears one).
	AccessIPv4, AccessIPv6 *string
	// AutoDiskConfig sets OS-DCF:diskConfig (true for AUTO).
	AutoDiskConfig *bool
	// UserData replaces the user data ("" for none), as a rebuild with
	// user_data does (2.57). Servers refuse it until every server has
	// FSMLevelUserDataUpdate.
	UserData *string
	WriteRequest
}

// ChangesTags reports whether the request touches tags.
func (r *InstanceUpdateRequest) ChangesTags() bool {
	return r.ReplaceTags || len(r.AddTags) > 0 || len(r.RemoveTags) > 0
}

// ChangesMetadata reports whether the request touches metadata, which
// Nova allows only in stable states.
func (r *InstanceUpdateRequest) ChangesMetadata() bool {
	return r.ReplaceMetadata || len(r.SetMetadata) > 0 || len(r.DeleteMetadata) > 0
}

// InstanceUpdateResponse carries the instance as the update left it.
type InstanceUpdateResponse struct {
	Instance *Instance
	WriteMeta
}

// InstanceUpdateEntry is the Raft entry of an instance update; the server
// resolved everything, including the timestamp, before proposal.
type InstanceUpdateEntry struct {
	InstanceID      string
	Name            *string
	Description     *string
	ReplaceMetadata bool
	SetMetadata     map[string]string
	DeleteMetadata  []string
	Hostname        *string
	KeyName         *string
	ReplaceTags     bool
	AddTags         []string
	RemoveTags      []string
	AccessIPv4      *string
	AccessIPv6      *string
	AutoDiskConfig  *bool
	UserData        *string
	UpdatedAt       int64
}

// Apply makes the entry's changes to inst (a copy the caller owns).
func (e *InstanceUpdateEntry) Apply(inst *Instance) {
	if e.Name != nil {
		inst.Name = *e.Name
	}
	if e.Description != nil {
		inst.Description = *e.Description
	}
	if e.ReplaceMetadata {
		inst.Metadata = nil
	}
	if len(e.SetMetadata) > 0 && inst.Metadata == nil {
		inst.Metadata = make(map[string]string, len(e.SetMetadata))
	}
	for k, v := range e.SetMetadata {
		inst.Metadata[k] = v
	}
	for _, k := range e.DeleteMetadata {
		delete(inst.Metadata, k)
	}
	if e.Hostname != nil {
		inst.Hostname = *e.Hostname
	}
	if e.KeyName != nil {
		inst.KeyName = *e.KeyName
	}
	if e.AccessIPv4 != nil {
		inst.AccessIPv4 = *e.AccessIPv4
	}
	if e.AccessIPv6 != nil {
		inst.AccessIPv6 = *e.AccessIPv6
	}
	if e.AutoDiskConfig != nil {
		inst.AutoDiskConfig = *e.AutoDiskConfig
	}
	if e.UserData != nil {
		inst.UserData = *e.UserData
	}
	if e.ReplaceTags {
		inst.Tags = nil
	}
	if e.ReplaceTags || len(e.AddTags) > 0 || len(e.RemoveTags) > 0 {
		tags := append(slices.Clone(inst.Tags), e.AddTags...)
		tags = slices.DeleteFunc(tags, func(t string) bool { return slices.Contains(e.RemoveTags, t) })
		inst.Tags = SortedTags(tags)
		if len(inst.Tags) == 0 {
			inst.Tags = nil
		}
	}
	inst.UpdatedAt = e.UpdatedAt
}
