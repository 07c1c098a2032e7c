package imagecache

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// Image pre-caching (Nova's 2.81 POST /os-aggregates/{id}/images): the
// servers record one request per aggregate and image; every hypervisor
// agent with an image cache watches the requests (a blocking query) and
// fetches the image of each new or renewed one into its cache when its
// host is in the aggregate. Nothing is reported back: the outcome is in
// the agent's log and the cache's metrics.

// precacheWait bounds one blocking query for image cache requests.
const precacheWait = 5 * time.Minute

// precacheRetry is the pause after a failed query.
const precacheRetry = 5 * time.Second

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// imageGetter is what the pre-cacher needs of an image cache.
type imageGetter interface {
	Get(ctx context.Context, img Image) (string, error)
}

// Precacher fetches the images of the cache requests of one host's
// aggregates into its image cache.
type Precacher struct {
	rpc      RPC
	hostID   func() string // "" until the host is registered
	cache    imageGetter
	logger   hclog.Logger
	shutdown <-chan struct{}
	// seen is the ModifyIndex of each request already handled, by
	// aggregate and image.
	seen map[precacheKey]uint64
}

type precacheKey struct {
	aggregate int64
	image     string
}

// NewPrecacher builds the pre-cacher of one host: hostID is the host's
// id ("" until it is registered), shutdown ends Run.
func NewPrecacher(rpc RPC, hostID func() string, cache *Cache, logger hclog.Logger, shutdown <-chan struct{}) *Precacher {
	return &Precacher{rpc: rpc, hostID: hostID, cache: cache, logger: logger, shutdown: shutdown, seen: map[precacheKey]uint64{}}
}

// Run follows the requests until shutdown.
func (p *Precacher) Run() {
	var index uint64
	for {
		select {
		case <-p.shutdown:
			return
		default:
		}
		var out structs.ImageCacheListResponse
		err := p.rpc.RPC("ImageCache.List", &structs.ImageCacheListRequest{
			QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: precacheWait}}, &out)
		if err != nil {
			p.logger.Debug("read image cache requests", "error", err)
			if !p.pause(precacheRetry) {
				return
			}
			continue
		}
		if p.hostID() == "" {
			// Not registered yet: read again soon, from the start.
			if !p.pause(time.Second) {
				return
			}
			continue
		}
		index = max(out.Index, 1)
		p.handle(out.Requests)
	}
}

// pause waits d, false when the agent shuts down first.
func (p *Precacher) pause(d time.Duration) bool {
	select {
	case <-p.shutdown:
		return false
	case <-time.After(d):
		return true
	}
}

// handle fetches the images of the requests not yet handled at their
// index whose aggregate holds this host.
func (p *Precacher) handle(reqs []*structs.ImageCacheRequest) {
	aggs := map[int64]*structs.Aggregate{}
	for _, r := range reqs {
		k := precacheKey{r.AggregateID, r.ImageID}
		if p.seen[k] >= r.ModifyIndex {
			continue
		}
		p.seen[k] = r.ModifyIndex
		agg, ok := aggs[r.AggregateID]
		if !ok {
			var out structs.SingleAggregateResponse
			if err := p.rpc.RPC("Aggregate.Get", &structs.AggregateSpecificRequest{AggregateID: r.AggregateID}, &out); err != nil {
				p.logger.Debug("image cache request of a gone aggregate", "aggregate", r.AggregateID, "error", err)
			}
			agg, aggs[r.AggregateID] = out.Aggregate, out.Aggregate
		}
		if agg == nil || !containsHost(agg.Hosts, p.hostID()) {
			continue
		}
		p.fetch(r)
	}
}

// fetch puts one image into the cache.
func (p *Precacher) fetch(r *structs.ImageCacheRequest) {
	var out structs.SingleImageResponse
	if err := p.rpc.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: r.ImageID}, &out); err != nil || out.Image == nil {
		p.logger.Warn("cannot pre-cache image", "image", r.ImageID, "aggregate", r.AggregateID, "error", err)
		return
	}
	img := out.Image
	if img.HashValue == "" {
		p.logger.Warn("cannot pre-cache an image without data", "image", img.ID)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.shutdown:
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	if _, err := p.cache.Get(ctx, Image{ID: img.ID, HashValue: img.HashValue, Size: img.Size}); err != nil {
		p.logger.Warn("pre-cache image", "image", img.ID, "aggregate", r.AggregateID, "error", err)
		return
	}
	p.logger.Info("image pre-cached", "image", img.ID, "aggregate", r.AggregateID, "took", time.Since(start))
}

func containsHost(hosts []string, id string) bool {
	for _, h := range hosts {
		if h == id {
			return true
		}
	}
	return false
}
