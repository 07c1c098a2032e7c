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

// UpdateInstance applies a user's changes (name, description, metadata,
// host name, tags) to an instance at index.
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
	if !e.ReplaceTags {
		for _, tag := range e.RemoveTags {
			if !existing.(*structs.Instance).HasTag(tag) {
				return structs.Errorf(structs.KindNotFound, "Tag %s could not be found.", tag)
			}
		}
	}
	if err := updateInstance(txn, index, e.InstanceID, e.Apply); err != nil {
		return err
	}
	if err := checkMetadataQuota(txn, e.InstanceID); err != nil {
		return err
	}
	if inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", e.InstanceID); err != nil {
		return err
	} else if len(inst.Tags) > structs.MaxServerTags {
		return structs.Errorf(structs.KindInvalid, "The number of tags exceeded the per-server limit %d", structs.MaxServerTags)
	}
	return commitAt(txn, index, TableInstances)
}
