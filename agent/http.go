package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/agent/cinder"
	ec2api "github.com/stratus-cloud/stratus/agent/ec2"
	"github.com/stratus-cloud/stratus/agent/glance"
	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/agent/native"
	"github.com/stratus-cloud/stratus/agent/neutron"
	"github.com/stratus-cloud/stratus/agent/nova"
	s3api "github.com/stratus-cloud/stratus/agent/s3"
	"github.com/stratus-cloud/stratus/agent/ui"
	"github.com/stratus-cloud/stratus/internal/httpx"
)

// routes is the HTTP port's handler: each API mounted at its prefix. The
// request limits (limits_http.go) wrap it.
func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	a.mountUI(mux)
	a.mountConsoleProxy(mux)
	a.mountDiskExports(mux)
	if a.identity != nil {
		mux.Handle(identity.MountPath, a.observed("identity", a.identity.Handler()))
		mux.Handle(identity.MountPath+"/", a.observed("identity", a.identity.Handler()))
	}
	if a.nova != nil {
		// /compute itself is the versions list, as Nova under a web
		// server at /compute: keystoneauth does not follow a relative
		// redirect to /compute/ (novaclient's version-list asks there).
		mux.Handle(nova.MountPath, a.observed("compute", a.nova.Handler()))
		mux.Handle(nova.MountPath+"/", a.observed("compute", a.nova.Handler()))
	}
	if a.neutron != nil {
		mux.Handle(neutron.MountPath, a.observed("network", a.neutron.Handler()))
		mux.Handle(neutron.MountPath+"/", a.observed("network", a.neutron.Handler()))
	}
	if a.s3 != nil {
		mux.Handle(s3api.MountPath+"/", a.observed("s3", a.s3.Handler(s3api.MountPath)))
	}
	if a.cinder != nil {
		mux.Handle(cinder.MountPath, a.observed("volume", a.cinder.Handler()))
		mux.Handle(cinder.MountPath+"/", a.observed("volume", a.cinder.Handler()))
	}
	if a.ec2 != nil {
		// /ec2 itself too: an endpoint URL without the slash is signed
		// and answered as it is, not redirected (a redirected POST
		// loses its body).
		mux.Handle(ec2api.MountPath, a.observed("ec2", a.ec2.Handler(ec2api.MountPath)))
		mux.Handle(ec2api.MountPath+"/", a.observed("ec2", a.ec2.Handler(ec2api.MountPath)))
	}
	if a.glance != nil {
		mux.Handle(glance.MountPath, a.observed("image", a.glance.Handler()))
		mux.Handle(glance.MountPath+"/", a.observed("image", a.glance.Handler()))
	}
	mux.Handle(native.MountPath, a.observed("native", a.native.Handler()))
	return mux
}

// forwarded wraps a listener's handler (outside the request limits, so
// that the rate limit keys on the client a trusted proxy forwarded for)
// so that the APIs' links name the URL clients reached: public_url, or
// what a trusted proxy's X-Forwarded-Proto/Host say
// (internal/httpx/forwarded.go). Config
// Finalize has checked the settings; an unfinalized config that fails
// trusts no proxy.
func (a *Agent) forwarded(h http.Handler) http.Handler {
	f, err := httpx.NewForwarding(a.config.HTTPTrustedProxies, a.config.PublicURL)
	if err != nil {
		a.logger.Warn("invalid public_url or http_trusted_proxies, trusting no proxy", "error", err)
		f = &httpx.Forwarding{}
	}
	return f.Middleware(h)
}

// mountUI serves the web UI (agent/ui) at /ui and redirects / there.
func (a *Agent) mountUI(mux *http.ServeMux) {
	handler := ui.Handler()
	mux.Handle(ui.MountPath, handler)
	mux.Handle(ui.MountPath+"/", handler)
	mux.Handle("GET /{$}", http.RedirectHandler(ui.MountPath+"/", http.StatusFound))
}

// startNative builds the native /v1 API over the agent's servers,
// services and pool.
func (a *Agent) startNative() {
	cfg := native.Config{
		RPC: a.rpc, Self: a.self, ACLEnabled: a.config.ACLEnabled(),
		Images: a.imageData, Observer: a.metrics, Metrics: a.metrics.handler(),
		Agent: native.AgentInfo{
			NodeName: a.config.NodeName, NodeID: a.nodeID, Region: a.config.Region, AZ: a.config.AZ,
			Server: a.config.IsServer(), Client: a.config.IsClient(), DataDir: a.config.DataDir,
			HTTPAddr: a.httpAddr, RPCAddr: a.RPCAddr(), GossipAddr: a.gossip.Addr(), Version: a.config.Version,
		},
		Gossip: a.gossip, WriteRetry: a.writeRetry, Logger: a.logger.Named("native"),
		EnableDebug: a.config.EnableDebug,
	}
	if b := a.config.LogBuffer; b != nil {
		cfg.Logs = b.Bytes
	}
	if a.devReady != nil {
		cfg.Readiness = a.devReady
		cfg.Anonymous = a.devAnonymous
	}
	// Only services that run: a nil pointer in an interface is not nil.
	if a.identity != nil {
		cfg.Verifier = a.identity
	}
	if a.consoles != nil {
		cfg.Consoles = a.consoles
	}
	if a.guests != nil {
		cfg.Guests = a.guests
	}
	if a.server != nil {
		cfg.RaftStats = a.server.Raft().Stats
	}
	a.native = native.New(cfg)
}
