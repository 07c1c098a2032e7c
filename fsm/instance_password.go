package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.InstancePasswordSetType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstancePasswordEntry
		if err := decodeBody(structs.InstancePasswordSetType, body, &e); err != nil {
			return err
		}
		return s.SetInstancePassword(index, &e, false)
	})
	registerApply(structs.InstancePasswordClearType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstancePasswordEntry
		if err := decodeBody(structs.InstancePasswordClearType, body, &e); err != nil {
			return err
		}
		return s.SetInstancePassword(index, &e, true)
	})
}

// SetInstancePassword stores a guest's encrypted password in its
// instance's system metadata at index, or clears it. A set refuses
// (KindConflict) when a password is already stored: a guest posts its
// password once, as Nova's metadata service allows.
func (s *StateStore) SetInstancePassword(index uint64, e *structs.InstancePasswordEntry, clear bool) error {
	txn := s.writeTxn()
	defer txn.Abort()
	raw, err := txn.First(TableInstances, "id", e.InstanceID)
	if err != nil {
		return err
	}
	if raw == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q not found", e.InstanceID)
	}
	password := e.Password
	if clear {
		password = ""
	} else if raw.(*structs.Instance).Password() != "" {
		return structs.Errorf(structs.KindConflict, "instance %s already has a password", e.InstanceID)
	}
	if err := updateInstance(txn, index, e.InstanceID, func(i *structs.Instance) { i.SetPassword(password) }); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
}
