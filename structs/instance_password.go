package structs

import (
	"fmt"
	"strings"
)

// Nova keeps a guest's encrypted password in four system metadata items
// of at most 255 characters each (nova.api.metadata.password).
const (
	PasswordChunks      = 4
	PasswordChunkLength = 255
	// MaxPasswordSize is the longest password a guest may post.
	MaxPasswordSize = PasswordChunks * PasswordChunkLength
)

// passwordKey is the system metadata key of chunk i.
func passwordKey(i int) string { return fmt.Sprintf("password_%d", i) }

// Password returns the instance's encrypted password as its guest
// posted it, "" when none was posted or it was cleared.
func (i *Instance) Password() string {
	var b strings.Builder
	for n := range PasswordChunks {
		b.WriteString(i.SystemMetadata[passwordKey(n)])
	}
	return b.String()
}

// SetPassword stores password in the instance's system metadata, split
// into Nova's chunks; "" clears it. The caller owns inst (a copy).
func (i *Instance) SetPassword(password string) {
	if i.SystemMetadata == nil {
		i.SystemMetadata = make(map[string]string, PasswordChunks)
	}
	for n := range PasswordChunks {
		start := min(n*PasswordChunkLength, len(password))
		end := min(start+PasswordChunkLength, len(password))
		if start == end {
			delete(i.SystemMetadata, passwordKey(n))
			continue
		}
		i.SystemMetadata[passwordKey(n)] = password[start:end]
	}
	if len(i.SystemMetadata) == 0 {
		i.SystemMetadata = nil
	}
}

// NeedsConfigDrive reports whether the instance gets a config drive:
// its create request asked for one (config_drive), its image requires
// one (img_config_drive=mandatory, as Nova's configdrive.required_by),
// or its flavor does (the extra spec hw:config_drive=true, a Stratus
// addition).
func (i *Instance) NeedsConfigDrive() bool {
	if i.ConfigDrive || strings.EqualFold(i.ImageProperties["img_config_drive"], "mandatory") {
		return true
	}
	if i.Flavor == nil {
		return false
	}
	switch strings.ToLower(i.Flavor.ExtraSpecs["hw:config_drive"]) {
	case "true", "yes", "1", "mandatory":
		return true
	}
	return false
}

// InstancePasswordRequest sets the guest's encrypted password once (the
// metadata service's POST /openstack/…/password), or clears it (Nova's
// DELETE os-server-password) when Clear is set.
type InstancePasswordRequest struct {
	InstanceID string
	Password   string
	Clear      bool
	WriteRequest
}

// InstancePasswordEntry is the Raft entry of a password change. A set (InstancePasswordSetType)
// fails with KindConflict when a password is already there, so two
// guests' posts racing never both win; a clear
// (InstancePasswordClearType) always succeeds.
type InstancePasswordEntry struct {
	InstanceID string
	Password   string
}
