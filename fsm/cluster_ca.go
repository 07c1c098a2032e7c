package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableClusterCA holds the cluster's own certificate authority (at most
// one record), which signs the certificates of Nova's os-certificates API
// when no CA key is configured.
const TableClusterCA = "cluster_ca"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableClusterCA, Indexes: map[string]*memdb.IndexSchema{"id": idIndex("ID")}}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ClusterCASnapshot,
		table:      TableClusterCA,
		newRecord:  func() any { return new(structs.ClusterCA) },
	})
	registerApply(structs.ClusterCASetType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var req structs.ClusterCASetRequest
		if err := decodeBody(structs.ClusterCASetType, body, &req); err != nil {
			return err
		}
		return s.SetClusterCA(index, req.CA)
	})
}

// SetClusterCA stores the cluster CA unless one is stored already: the
// first committed CA stays, so a second leader racing to create one
// cannot replace a root that users may already trust. It is not an error
// to lose that race; the caller reads ClusterCA to learn the winner.
func (s *StateStore) SetClusterCA(index uint64, ca *structs.ClusterCA) error {
	if ca == nil || len(ca.CertPEM) == 0 || len(ca.KeyPEM) == 0 {
		return structs.Errorf(structs.KindInvalid, "a cluster CA needs a certificate and a key")
	}
	existing, err := s.ClusterCA(nil)
	if err != nil || existing != nil {
		return err
	}
	c := *ca
	c.ID = structs.ClusterCAID
	return s.upsertOne(index, TableClusterCA, &c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.ClusterCA).CreateIndex }, c.ID)
}

// ClusterCA returns the cluster CA, or nil when none was created yet.
func (s *StateStore) ClusterCA(ws memdb.WatchSet) (*structs.ClusterCA, error) {
	return first[*structs.ClusterCA](s.ReadTxn(), ws, TableClusterCA, "id", structs.ClusterCAID)
}
