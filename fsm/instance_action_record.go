package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.InstanceActionRecordType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceActionRecordEntry
		if err := decodeBody(structs.InstanceActionRecordType, body, &e); err != nil {
			return err
		}
		return s.RecordInstanceAction(index, &e)
	})
}

// RecordInstanceAction stores a finished action of an instance that
// exists. Recording the same request again changes nothing, so a
// retried entry is harmless.
func (s *StateStore) RecordInstanceAction(index uint64, e *structs.InstanceActionRecordEntry) error {
	a := e.Action
	if a == nil || a.InstanceID == "" || a.RequestID == "" || a.Action == "" {
		return structs.Errorf(structs.KindInvalid, "an instance action needs an instance, a request id and a name")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", a.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil {
		return structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", a.InstanceID)
	}
	old, err := txn.First(TableInstanceActions, "id", a.InstanceID, a.RequestID)
	if err != nil {
		return err
	}
	if old != nil {
		return nil
	}
	if err := insertAction(txn, index, a); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstanceActions)
}
