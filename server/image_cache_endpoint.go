package server

import (
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// ImageCache is the endpoint for image cache requests (Nova's 2.81
// aggregate image pre-caching): a request is recorded in the state;
// the agents of the aggregate's hosts watch the requests (List, a
// blocking query) and fetch the images into their image caches.
type ImageCache struct{ srv *Server }

// Request records a request to cache images on an aggregate's hosts.
// The aggregate must exist (not found otherwise) and every image must
// exist and be active (invalid otherwise).
func (e *ImageCache) Request(args *structs.ImageCacheCreateRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("ImageCache.Request", args, args, reply); done {
		return err
	}
	if len(args.ImageIDs) == 0 {
		return structs.Errorf(structs.KindInvalid, "no images to cache")
	}
	ids := slices.Clone(args.ImageIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	index, err := e.srv.apply(structs.ImageCacheRequestType, &structs.ImageCacheEntry{AggregateID: args.AggregateID,
		ImageIDs: ids, RequestedAt: time.Now().UnixNano()})
	reply.Index = index
	return err
}

// List reads every image cache request; agents block on it until the
// table passes their index.
func (e *ImageCache) List(args *structs.ImageCacheListRequest, reply *structs.ImageCacheListResponse) error {
	if done, err := e.srv.forward("ImageCache.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reqs, err := state.ImageCacheRequests(ws)
		if err != nil {
			return nil, 0, err
		}
		reply.Requests = reqs
		return reqs, state.Index(fsm.TableImageCache), nil
	})
}
