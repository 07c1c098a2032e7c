package native

import (
	"net/http"
	"net/http/pprof"
	runtimepprof "runtime/pprof"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// The Go profiler, as Nomad's /v1/agent/pprof: admins only, and only
// with enable_debug, since a CPU profile or trace costs the agent while
// it runs and a heap profile shows what it holds.

func (a *API) debugOff() error {
	if a.cfg.EnableDebug {
		return nil
	}
	return structs.Errorf(structs.KindNotFound, "the profiler is off on this agent: set enable_debug = true in its configuration")
}

// pprofIndex lists the profiles GET /v1/agent/pprof/{profile} serves.
func (a *API) pprofIndex(_ http.ResponseWriter, _ *request) (any, error) {
	if err := a.debugOff(); err != nil {
		return nil, err
	}
	names := []string{"cmdline", "profile", "symbol", "trace"}
	for _, p := range runtimepprof.Profiles() {
		names = append(names, p.Name())
	}
	sort.Strings(names)
	return map[string][]string{"Profiles": names}, nil
}

// pprofProfile serves one profile: profile (CPU, ?seconds=N), trace
// (?seconds=N), cmdline, symbol, or a runtime profile by name (heap,
// goroutine, allocs, block, mutex, threadcreate; ?debug=1 for text).
func (a *API) pprofProfile(w http.ResponseWriter, q *request) (any, error) {
	if err := a.debugOff(); err != nil {
		return nil, err
	}
	name := q.param("profile")
	switch name {
	case "profile":
		pprof.Profile(w, q.Request)
	case "trace":
		pprof.Trace(w, q.Request)
	case "cmdline":
		pprof.Cmdline(w, q.Request)
	case "symbol":
		pprof.Symbol(w, q.Request)
	default:
		if runtimepprof.Lookup(name) == nil {
			return nil, structs.Errorf(structs.KindNotFound, "no profile %q (GET /v1/agent/pprof lists them)", name)
		}
		pprof.Handler(name).ServeHTTP(w, q.Request)
	}
	return nil, nil
}
