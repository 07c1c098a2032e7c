package agent

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/imagecache"
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

// imageGetter is what the pre-cacher needs of an image cache.
type imageGetter interface {
	Get(ctx context.Context, img imagecache.Image) (string, error)
}

// imagePrecacher fetches the images of the cache requests of one host's
// aggregates into its image cache.
type imagePrecacher struct {
	rpc      rpcCaller
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

// startImagePrecache starts a host's pre-cacher in the background.
func (a *Agent) startImagePrecache(hostID func() string, cache *imagecache.Cache, host string) {
	p := &imagePrecacher{rpc: a.nodeRPC(), hostID: hostID, cache: cache, logger: a.logger.Named("precache").With("host", host),
		shutdown: a.shutdownCh, seen: map[precacheKey]uint64{}}
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		p.run()
	}()
}

// run follows the requests until shutdown.
func (p *imagePrecacher) run() {
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
func (p *imagePrecacher) pause(d time.Duration) bool {
	select {
	case <-p.shutdown:
		return false
	case <-time.After(d):
		return true
	}
}

// handle fetches the images of the requests not yet handled at their
// index whose aggregate holds this host.
func (p *imagePrecacher) handle(reqs []*structs.ImageCacheRequest) {
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
func (p *imagePrecacher) fetch(r *structs.ImageCacheRequest) {
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
	if _, err := p.cache.Get(ctx, imagecache.Image{ID: img.ID, HashValue: img.HashValue, Size: img.Size}); err != nil {
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
