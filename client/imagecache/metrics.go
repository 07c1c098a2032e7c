package imagecache

import "github.com/prometheus/client_golang/prometheus"

// metrics are the cache's Prometheus figures; a nil *metrics records
// nothing.
type metrics struct {
	hits, misses, failures, evictions prometheus.Counter
	bytes                             prometheus.Counter
}

func newMetrics(c *Cache, reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "stratus_image_cache_hits_total",
			Help: "Image requests answered from the agent's image cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "stratus_image_cache_misses_total",
			Help: "Image requests that started a download."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "stratus_image_cache_download_failures_total",
			Help: "Image downloads that failed or did not match their sha512."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "stratus_image_cache_evictions_total",
			Help: "Cached images removed to keep the cache within its bound."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "stratus_image_cache_downloaded_bytes_total",
			Help: "Bytes of image data downloaded into the cache."}),
	}
	size := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stratus_image_cache_bytes",
		Help: "Bytes the agent's image cache holds."}, func() float64 { return float64(c.Size()) })
	count := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stratus_image_cache_images",
		Help: "Images the agent's image cache holds."}, func() float64 { return float64(len(c.List())) })
	for _, col := range []prometheus.Collector{m.hits, m.misses, m.failures, m.evictions, m.bytes, size, count} {
		if err := reg.Register(col); err != nil {
			c.logger.Warn("cannot register an image cache metric", "error", err)
		}
	}
	return m
}

func (m *metrics) hit() {
	if m != nil {
		m.hits.Inc()
	}
}

func (m *metrics) miss() {
	if m != nil {
		m.misses.Inc()
	}
}

func (m *metrics) failed() {
	if m != nil {
		m.failures.Inc()
	}
}

func (m *metrics) evicted() {
	if m != nil {
		m.evictions.Inc()
	}
}

func (m *metrics) downloaded(n int64) {
	if m != nil {
		m.bytes.Add(float64(n))
	}
}
