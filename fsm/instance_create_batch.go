package fsm

import "github.com/stratus-cloud/stratus/structs"

func init() {
	registerApply(structs.InstanceCreateBatchType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceCreateBatchEntry
		if err := decodeBody(structs.InstanceCreateBatchType, body, &e); err != nil {
			return err
		}
		return s.createInstanceBatch(index, &e) // decoded here: ours to keep
	})
}

// CreateInstanceBatch applies the creates of a coalesced batch in order,
// each as if it had an entry of its own, and returns one result per
// create: nil, or why that create was refused. The accepted ones commit
// in one transaction, so a reader that sees index sees all of them (a
// worker waits for its evaluation's index, then reads its instances). A
// create that fails leaves nothing behind: the transaction is dropped
// and built again without it.
func (s *StateStore) CreateInstanceBatch(index uint64, e *structs.InstanceCreateBatchEntry) []error {
	c := *e
	c.Entries = make([]*structs.InstanceCreateEntry, len(e.Entries))
	for i, en := range e.Entries {
		if en != nil {
			c.Entries[i] = ownCreate(en)
		}
	}
	return s.createInstanceBatch(index, &c)
}

func (s *StateStore) createInstanceBatch(index uint64, e *structs.InstanceCreateBatchEntry) []error {
	out := make([]error, len(e.Entries))
	for {
		txn := s.writeTxn()
		seen := map[string]bool{}
		var tables []string
		failed := false
		for i, c := range e.Entries {
			if out[i] != nil {
				continue
			}
			changed, err := s.createInstancesTxn(txn, index, c)
			if err != nil {
				out[i], failed = err, true
				break
			}
			for _, t := range changed {
				if !seen[t] {
					seen[t] = true
					tables = append(tables, t)
				}
			}
		}
		if failed {
			txn.Abort()
			continue
		}
		if len(tables) == 0 {
			txn.Abort()
			return out
		}
		if err := commitAt(txn, index, tables...); err != nil {
			txn.Abort()
			for i := range out {
				if out[i] == nil {
					out[i] = err
				}
			}
		}
		return out
	}
}
