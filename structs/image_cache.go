package structs

// ImageCacheRequest asks every host of an aggregate to pre-fetch an
// image into its image cache (Nova's 2.81 POST
// /os-aggregates/{id}/images). There is one per aggregate and image;
// asking again bumps its ModifyIndex, which agents watch: an agent
// fetches each request it has not seen at that index when its host is
// in the aggregate, and reports nothing back but logs and metrics.
type ImageCacheRequest struct {
	AggregateID int64
	ImageID     string
	// RequestedAt is when it was last asked for (unix nanoseconds).
	RequestedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (r *ImageCacheRequest) Copy() *ImageCacheRequest {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// ImageCacheEntry is the Raft entry of an image cache request: the
// aggregate and the images (each must exist and be active) to cache on
// its hosts.
type ImageCacheEntry struct {
	AggregateID int64
	ImageIDs    []string
	RequestedAt int64
}

// ImageCacheCreateRequest asks the hosts of an aggregate to cache
// images.
type ImageCacheCreateRequest struct {
	AggregateID int64
	ImageIDs    []string
	WriteRequest
}

// ImageCacheListRequest lists image cache requests, a blocking query
// agents run to learn of new ones.
type ImageCacheListRequest struct {
	QueryOptions
}

// ImageCacheListResponse carries the image cache requests.
type ImageCacheListResponse struct {
	Requests []*ImageCacheRequest
	QueryMeta
}
