package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableImageCache is the name of the image cache request table, for
// Index and blocking queries.
const TableImageCache = "image_cache_requests"

// Image cache requests (Nova's 2.81 aggregate image pre-caching) are
// one record per aggregate and image. Agents watch the table and fetch
// the images of the requests of their aggregates into their caches;
// nothing comes back to the state.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableImageCache,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.IntFieldIndex{Field: "AggregateID"},
					&memdb.StringFieldIndex{Field: "ImageID"},
				}}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ImageCacheSnapshot,
		table:      TableImageCache,
		newRecord:  func() any { return new(structs.ImageCacheRequest) },
	})
	registerApply(structs.ImageCacheRequestType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ImageCacheEntry
		if err := decodeBody(structs.ImageCacheRequestType, body, &e); err != nil {
			return err
		}
		return s.RequestImageCache(index, &e)
	})
}

// RequestImageCache records (or renews) a request to cache images on
// an aggregate's hosts. The aggregate must exist, and every image must
// exist and be active; otherwise nothing is recorded.
func (s *StateStore) RequestImageCache(index uint64, e *structs.ImageCacheEntry) error {
	if len(e.ImageIDs) == 0 {
		return structs.Errorf(structs.KindInvalid, "image cache request without images")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	agg, err := first[*structs.Aggregate](txn, nil, TableAggregates, "id", e.AggregateID)
	if err != nil {
		return err
	}
	if agg == nil {
		return structs.Errorf(structs.KindNotFound, "Aggregate %d could not be found.", e.AggregateID)
	}
	for _, id := range e.ImageIDs {
		img, err := first[*structs.Image](txn, nil, TableImages, "id", id)
		if err != nil {
			return err
		}
		if img == nil {
			return structs.Errorf(structs.KindInvalid, "Image %s could not be found.", id)
		}
		if img.Status != structs.ImageActive {
			return structs.Errorf(structs.KindInvalid, "Image %s is not active.", id)
		}
	}
	for _, id := range e.ImageIDs {
		r := &structs.ImageCacheRequest{AggregateID: e.AggregateID, ImageID: id, RequestedAt: e.RequestedAt,
			CreateIndex: index, ModifyIndex: index}
		existing, err := first[*structs.ImageCacheRequest](txn, nil, TableImageCache, "id", e.AggregateID, id)
		if err != nil {
			return err
		}
		if existing != nil {
			r.CreateIndex = existing.CreateIndex
		}
		if err := txn.Insert(TableImageCache, r); err != nil {
			return fmt.Errorf("store image cache request of aggregate %d: %w", e.AggregateID, err)
		}
	}
	return commitAt(txn, index, TableImageCache)
}

// ImageCacheRequests lists every image cache request.
func (s *StateStore) ImageCacheRequests(ws memdb.WatchSet) ([]*structs.ImageCacheRequest, error) {
	return list[*structs.ImageCacheRequest](s.ReadTxn(), ws, TableImageCache, "id_prefix")
}
