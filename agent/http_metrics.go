package agent

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
)

// Every HTTP API's requests are counted and timed by API, route
// template and status code (stratus_api_requests_total,
// stratus_api_request_duration_seconds): the API's dispatch names the
// route it matched (route.Slot); a request no route took is labelled
// "unmatched", so raw paths never become label values.

// observed wraps an API's handler with its request metrics and the
// access log.
func (a *Agent) observed(api string, h http.Handler) http.Handler {
	m := a.metrics
	if m == nil {
		return h
	}
	level := a.accessLogLevel()
	access := a.logger.Named("http")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, slot := route.WithSlot(r.Context())
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r.WithContext(ctx))
		pattern := slot.Pattern()
		if pattern == "" {
			pattern = "unmatched"
		}
		took := time.Since(start)
		m.apiRequests.WithLabelValues(api, pattern, strconv.Itoa(rec.status)).Inc()
		m.apiDuration.WithLabelValues(api, pattern).Observe(took.Seconds())
		if level != hclog.Off && level >= access.GetLevel() {
			user, project := slot.Caller()
			access.Log(level, "request", "api", api, "method", r.Method, "route", pattern, "status", rec.status,
				"duration", took, "request_id", requestID(rec.Header()), "remote", httpx.ClientAddr(r),
				"user", user, "project", project)
		}
	})
}

// accessLogLevel is the configured access_log level.
func (a *Agent) accessLogLevel() hclog.Level {
	if a.config.AccessLog == "" {
		return hclog.Debug
	}
	return hclog.LevelFromString(a.config.AccessLog)
}

// requestID is the request ID an API answered with, "" for none.
func requestID(h http.Header) string {
	for _, k := range []string{"X-Openstack-Request-Id", "X-Compute-Request-Id", "X-Amz-Request-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// statusRecorder remembers the status code a handler wrote. Unwrap
// keeps http.ResponseController's flushes and hijacks working.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}

// Flush passes flushes through, for streamed answers (image data, S3
// objects, blocking queries).
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap is the wrapped writer, for http.ResponseController.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
