package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.InstanceUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceUpdateEntry
		if err := decodeBody(structs.InstanceUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateInstance(index, &e)
	})
}

// UpdateInstance applies a user's changes (name, description, metadata)
// to an instance at index.
func (s *StateStore) UpdateInstance(index uint64, e *structs.InstanceUpdateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := txn.First(TableInstances, "id", e.InstanceID)
	if err != nil {
		return err
	}
	if existing == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q not found", e.InstanceID)
	}
	if err := updateInstance(txn, index, e.InstanceID, e.Apply); err != nil {
		return err
	}
	if err := checkMetadataQuota(txn, e.InstanceID); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
}
