package fsm

import "github.com/stratus-cloud/stratus/structs"

func init() {
	registerApply(structs.AllocClientUpdateBatchType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.AllocClientUpdateBatchEntry
		if err := decodeBody(structs.AllocClientUpdateBatchType, body, &e); err != nil {
			return err
		}
		return s.UpdateAllocsFromClientBatch(index, &e)
	})
}

// UpdateAllocsFromClientBatch applies the reports of a coalesced batch in
// order, each as if it had an entry of its own, and returns one result
// per report: nil, or why it was refused. The accepted ones commit in one
// transaction (one wake-up of every blocking query); a refused one leaves
// nothing behind: the transaction is dropped and built again without it.
func (s *StateStore) UpdateAllocsFromClientBatch(index uint64, e *structs.AllocClientUpdateBatchEntry) []error {
	out := make([]error, len(e.Entries))
	for {
		txn := s.writeTxn()
		failed, applied := false, 0
		var pending []*structs.AllocClientUpdateEntry
		for i, u := range e.Entries {
			if out[i] == nil && u != nil {
				pending = append(pending, u)
			}
		}
		pre, err := readReports(txn, pending)
		if err != nil {
			txn.Abort()
			for i := range out {
				if out[i] == nil {
					out[i] = err
				}
			}
			return out
		}
		for i, u := range e.Entries {
			if out[i] != nil {
				continue
			}
			if u == nil {
				out[i] = structs.Errorf(structs.KindInvalid, "empty report in a batch")
				continue
			}
			if err := s.updateAllocsFromClientTxn(txn, index, u, pre); err != nil {
				out[i], failed = err, true
				break
			}
			applied++
		}
		if failed {
			txn.Abort()
			continue
		}
		if applied == 0 {
			txn.Abort()
			return out
		}
		if err := commitAt(txn, index, allocUpdateTables...); err != nil {
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
