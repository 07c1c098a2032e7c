package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/cinder"
	"github.com/stratus-cloud/stratus/agent/console"
	ec2api "github.com/stratus-cloud/stratus/agent/ec2"
	"github.com/stratus-cloud/stratus/agent/glance"
	"github.com/stratus-cloud/stratus/agent/guest"
	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/agent/metadata"
	"github.com/stratus-cloud/stratus/agent/native"
	"github.com/stratus-cloud/stratus/agent/neutron"
	"github.com/stratus-cloud/stratus/agent/nova"
	s3api "github.com/stratus-cloud/stratus/agent/s3"
	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/dataplane"
	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// Agent is one running `cloudctl agent`.
type Agent struct {
	config *Config
	logger hclog.Logger
	nodeID string

	// server is set when the agent runs the server role.
	server *server.Server
	// gossip is the agent's pool: the server's own, or a client's.
	gossip *gossip.Pool
	// rpc reaches a server: in process, or over the pool, with the
	// credential each call carries (a user's token); self adds the
	// agent's own, for the calls it makes on its own behalf
	// (rpc_credentials.go).
	rpc  rpcCaller
	self rpcCaller
	// writeRetry is how long an idempotent write (a keyed create, a
	// delete) is retried across leader elections; zero sends it once.
	writeRetry time.Duration
	// nodeSecret authenticates this agent's hosts (client agents).
	nodeSecret string
	// connPool carries a client-only agent's RPCs.
	connPool *rpc.ConnPool

	// clients are the hypervisor agents this process runs: its own
	// host, plus simulated ones.
	clients []*client.Client
	// dataplanes wire the clients' networking (client.dataplane).
	dataplanes []*dataplane.Agent
	// drivers are the clients' virt drivers that hold resources (the
	// libvirt driver's connection), closed after the clients stop.
	drivers []io.Closer

	httpServer *http.Server
	httpAddr   string
	metrics    *metrics

	// limits are the HTTP listeners' request limits (agent/limits.go).
	limits *httpLimits

	// identity serves the Keystone API and verifies tokens.
	identity *identity.Service
	// nova serves the Compute API (Nova v2.1) under /compute.
	nova *nova.API
	// neutron serves the Networking API (Neutron v2.0) under /network.
	neutron *neutron.API
	// glance serves the Image API (Glance v2) under /image; imageData
	// streams image data to and from the servers.
	glance *glance.API
	// cinder serves the Block Storage API (Cinder v3) under /volume.
	cinder    *cinder.API
	imageData *imageData
	// s3 serves the S3 object store API under /s3 and, when configured,
	// on a dedicated listener (s3Server at s3Addr).
	s3       *s3api.API
	s3Server *http.Server
	s3Addr   string
	// ec2 serves the EC2 Query API under /ec2/.
	ec2 *ec2api.API

	// consoles serves console output and the console proxies;
	// hostDrivers are the hosts whose consoles this agent proxies.
	consoles      *console.Service
	guests        *guest.Service
	consoleLn     net.Listener
	consoleServer *http.Server
	hostDrivers   []hostDriver
	// diskExports serves the hosts' disks to moves (disk_export.go).
	diskExports diskExports
	// httpsCert, httpsServer and internodeTransport are set with
	// tls { http = true } (http_tls.go).
	httpsCert          *certReloader
	httpsServer        *tls.Config
	internodeTransport *http.Transport

	// native serves the native /v1 API (agent/native).
	native *native.API

	// metadata is the metadata service of a client agent, listening at
	// metadataAddr (agent/metadata_service.go).
	metadata     *metadata.Service
	metadataAddr string

	// devReady tracks dev mode's seeding, and devOwner is who its
	// anonymous requests act as (agent/dev_ready.go).
	devReady      *devReadiness
	devOwner      atomic.Pointer[policy.Subject]
	devOwnerKnown chan struct{}

	shutdownOnce sync.Once
	shutdownCh   chan struct{}
	bgWG         sync.WaitGroup
}

// rpcCaller is how the HTTP layer reaches the servers.
type rpcCaller interface {
	RPC(method string, args, reply any) error
}

// New starts an agent from a finalized config.
func New(cfg *Config, logger hclog.Logger) (a *Agent, err error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a = &Agent{config: cfg, logger: logger, shutdownCh: make(chan struct{}), writeRetry: retry.Budget}
	if cfg.DevMode {
		a.devReady = newDevReadiness("identity", "image", "flavors", "networks")
		a.devOwnerKnown = make(chan struct{})
	}
	// Undo a failed start. The named result is nil by then, so hold on
	// to the agent itself.
	started := a
	defer func() {
		if err != nil {
			_ = started.Shutdown()
		}
	}()
	if cfg.DataDir == "" {
		return nil, fmt.Errorf("agent: a data dir is required")
	}
	if a.nodeID, err = nodeID(cfg.DataDir); err != nil {
		return nil, err
	}

	if err := a.setupHTTPS(); err != nil { // http_tls.go
		return nil, err
	}
	// Bind HTTP first so its real address can be advertised in gossip.
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.HTTPPort())))
	if err != nil {
		return nil, fmt.Errorf("listen for http: %w", err)
	}
	a.httpAddr = net.JoinHostPort(cfg.Advertise, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	ln = a.secureListener(ln)
	if err := a.startMembership(); err != nil {
		_ = ln.Close()
		return nil, err
	}
	if err := a.startServices(); err != nil {
		_ = ln.Close()
		return nil, err
	}
	a.serveHTTP(ln)
	a.logger.Info("agent started", "node", cfg.NodeName, "id", a.nodeID, "region", cfg.Region,
		"server", cfg.IsServer(), "client", cfg.IsClient(), "http", a.httpAddr,
		"rpc", a.RPCAddr(), "gossip", a.gossip.Addr(), "data_dir", cfg.DataDir)
	if cfg.DevMode {
		a.startDevSeeding()
	}
	return a, nil
}

// startMembership starts what makes this agent a member of the cluster:
// the Raft server and its gossip, or a client's gossip; a client's node
// secret, which authenticates every host of the agent, comes first.
func (a *Agent) startMembership() error {
	if a.config.IsClient() {
		var err error
		if a.nodeSecret, err = client.LoadOrCreateNodeSecret(a.config.DataDir); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	if a.config.IsServer() {
		return a.startServer()
	}
	return a.startClientGossip()
}

// startServices starts the agent's hosts and the services its HTTP
// listener serves: identity, consoles and guests, the Compute, Network,
// Block Storage, EC2, Image, S3 and native APIs.
func (a *Agent) startServices() error {
	// Image data and metrics come first: the hosts' image caches use
	// them.
	a.imageData = &imageData{a: a}
	a.metrics = newMetrics(a)
	if a.config.IsClient() {
		if err := a.startHosts(); err != nil {
			return err
		}
		if err := a.startMetadata(); err != nil {
			return err
		}
	}
	var err error
	if a.identity, err = identity.New(identity.Config{RPC: a.rpc, Logger: a.logger}); err != nil {
		return err
	}
	a.identity.Start()
	if err := a.startConsoles(); err != nil {
		return err
	}
	a.nova = nova.New(nova.Config{RPC: a.computeRPC(), Verifier: a.Identity(), Logger: a.logger.Named("nova"), Servers: a.novaServers,
		WriteRetry: a.writeRetry})
	a.nova.SetConsoles(a.consoles)
	a.startGuests()
	a.nova.SetGuests(a.guests)
	a.neutron = neutron.New(neutron.Config{RPC: a.rpc, Verifier: a.Identity(), Logger: a.logger.Named("neutron")})
	a.cinder = cinder.New(cinder.Config{RPC: a.rpc, Verifier: a.Identity(), Logger: a.logger.Named("cinder")})
	// The EC2 API calls with the token the servers issue per verified
	// request (S3.Verify, service ec2), never with the agent's own.
	a.ec2 = ec2api.New(ec2api.Config{RPC: a.rpc, Region: a.config.Region, Zone: a.config.AZ, WriteRetry: a.writeRetry,
		Consoles: a.consoles, Logger: a.logger.Named("ec2")})
	a.glance = glance.New(glance.Config{RPC: a.rpc, Verifier: a.Identity(), Data: a.imageData, Logger: a.logger.Named("glance")})
	if err := a.startS3(); err != nil {
		return err
	}
	a.startNative()
	return nil
}

// serveHTTP serves the agent's routes on ln until Shutdown.
func (a *Agent) serveHTTP(ln net.Listener) {
	a.httpServer = a.httpLimits().newHTTPServer(a.devSettled(a.routes()), ifaceAuto, a.logger)
	a.httpServer.Handler = a.forwarded(a.httpServer.Handler)
	a.watchSIGHUP()
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		if err := a.httpServer.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("http server stopped", "error", err)
		}
	}()
}

func (a *Agent) startServer() error {
	cfg := a.config
	gossipKey, err := cfg.gossipKey()
	if err != nil {
		return err
	}
	tlsServer, tlsClient, err := cfg.tlsConfigs()
	if err != nil {
		return err
	}
	ca, err := cfg.configuredCA()
	if err != nil {
		return err
	}
	srv, err := server.NewServer(&server.Config{
		TLSServer:               tlsServer,
		TLSClient:               tlsClient,
		RequireTLS:              tlsServer != nil,
		RaftPeerName:            cfg.raftPeerName(),
		GossipKeyringFile:       cfg.keyringFile(),
		ACLEnabled:              cfg.ACLEnabled(),
		CA:                      ca,
		NodeName:                cfg.NodeName,
		NodeID:                  a.nodeID,
		Region:                  cfg.Region,
		AZ:                      cfg.AZ,
		DataDir:                 cfg.DataDir,
		BindAddr:                cfg.BindAddr,
		AdvertiseAddr:           cfg.Advertise,
		RPCPort:                 cfg.RPCPort(),
		GossipPort:              cfg.GossipPort(),
		HTTPAddr:                a.httpAddr,
		BootstrapExpect:         cfg.Server.BootstrapExpect,
		NumSchedulers:           cfg.Server.NumSchedulers,
		RaftTimeScale:           cfg.Server.RaftTimeScale,
		Scheduler:               cfg.schedulerConfig(),
		HeartbeatTTL:            cfg.heartbeatTTL(),
		MaxHeartbeatsPerSecond:  cfg.Server.MaxHeartbeatsPerSecond,
		MaxBuildAttempts:        cfg.Server.MaxBuildAttempts,
		ResizeConfirmWindow:     mustDuration(cfg.Server.ResizeConfirmWindow),
		ShelvedOffloadTime:      mustDuration(cfg.Server.ShelvedOffloadTime),
		AllowResizeToSameHost:   cfg.Server.AllowResizeToSameHost,
		ReclaimInstanceInterval: mustDuration(cfg.Server.ReclaimInstanceInterval),
		DeletedRetention:        mustRetention(cfg.Server.DeletedRetention),
		EvalGCThreshold:         mustDuration(cfg.Server.EvalGCThreshold),
		IdempotencyKeyTTL:       mustDuration(cfg.Server.IdempotencyKeyTTL),
		VolumeBuildTimeout:      mustDuration(cfg.Server.VolumeBuildTimeout),
		NetSegments:             cfg.mustNetSegments(),
		Join:                    cfg.Server.RetryJoin,
		GossipFast:              cfg.DevMode || cfg.BindAddr == "127.0.0.1",
		GossipKey:               gossipKey,
		Version:                 cfg.Version,
		Logger:                  a.logger,
	})
	if err != nil {
		return err
	}
	a.server = srv
	a.gossip = srv.Gossip()
	a.rpc = userRPC{srv: srv}
	a.self = srv
	return nil
}

// startClientGossip joins the pool as a client-only agent, whose RPCs go
// to servers it learns from gossip.
func (a *Agent) startClientGossip() error {
	cfg := a.config
	gossipKey, err := cfg.gossipKey()
	if err != nil {
		return err
	}
	pool, err := gossip.New(gossip.Config{
		NodeName:      cfg.NodeName,
		BindAddr:      cfg.BindAddr,
		BindPort:      cfg.GossipPort(),
		AdvertiseAddr: cfg.Advertise,
		Fast:          cfg.BindAddr == "127.0.0.1",
		SecretKey:     gossipKey,
		KeyringFile:   cfg.keyringFile(),
		Logger:        a.logger,
		Meta: gossip.Meta{ID: a.nodeID, Role: gossip.RoleClient, Region: cfg.Region, AZ: cfg.AZ,
			HTTPAddr: a.httpAddr, Version: cfg.Version},
	})
	if err != nil {
		return fmt.Errorf("start gossip: %w", err)
	}
	a.gossip = pool
	_, tlsClient, err := cfg.tlsConfigs()
	if err != nil {
		return err
	}
	a.connPool = rpc.NewConnPool(rpc.PoolConfig{TLS: tlsClient, Logger: a.logger})
	a.rpc = &serverRPC{pool: pool, conns: a.connPool, region: cfg.Region}
	a.self = route.WithCredential(a.rpc, a.nodeSecret)
	if addrs := append(append([]string(nil), cfg.Client.Servers...), cfg.Client.RetryJoin...); len(addrs) > 0 {
		// The servers may not be up yet: keep trying in the background.
		a.bgWG.Add(1)
		go func() {
			defer a.bgWG.Done()
			pool.RetryJoin(addrs, time.Second, a.shutdownCh, a.logger)
		}()
	}
	return nil
}

// HTTPAddr is the advertised host:port of the HTTP API.
func (a *Agent) HTTPAddr() string { return a.httpAddr }

// HTTPURL is the advertised base URL of the HTTP API: https:// with
// tls { http = true }.
func (a *Agent) HTTPURL() string { return a.httpScheme() + "://" + a.httpAddr }

// RPCAddr is the server's RPC address, or "" for a client-only agent.
func (a *Agent) RPCAddr() string {
	if a.server == nil {
		return ""
	}
	return a.server.RPCAddr()
}

// Server returns the embedded server, or nil.
func (a *Agent) Server() *server.Server { return a.server }

// seedDevFlavors loads devstack's flavors once a dev cluster has a
// leader and no flavors yet. It goes through Raft like any other write.
// It waits for the dev hosts' registration and for the dev image first,
// so that a dev cloud showing its flavors can also place a boot of
// cirros (else a first boot right after start could fail with "No valid
// host", or, before any image exists, pass the image check under the
// name "cirros" and build without the image's data). A boot needs a
// flavor, so none can start before the image is there.
func (a *Agent) seedDevFlavors() error {
	if !a.devHostsRegistered() {
		return errors.New("the dev hosts are not registered yet")
	}
	if err := a.devImageSeeded(); err != nil {
		return err
	}
	var list structs.FlavorListResponse
	if err := a.self.RPC("Flavor.List", &structs.FlavorListRequest{}, &list); err != nil {
		return err
	}
	if len(list.Flavors) > 0 {
		return nil
	}
	var resp structs.FlavorUpsertResponse
	if err := a.self.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &resp); err != nil {
		return err
	}
	a.logger.Info("dev mode: seeded flavors m1.tiny … m1.xlarge")
	return nil
}

// devImageSeeded returns nil once dev mode's image cirros is active (the
// servers' seedDevImage registers it with its data in one entry), and
// at once for an agent that runs no server, which seeds no image.
func (a *Agent) devImageSeeded() error {
	if a.server == nil {
		return nil
	}
	var out structs.SingleImageResponse
	if err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devImageID}, &out); err != nil {
		return fmt.Errorf("the dev image is not seeded yet: %w", err)
	}
	if out.Image == nil || out.Image.Status != structs.ImageActive {
		return fmt.Errorf("the dev image is not active yet")
	}
	return nil
}

// devHostsRegistered reports whether every host this agent runs has
// registered with the servers.
func (a *Agent) devHostsRegistered() bool {
	for _, c := range a.clients {
		if !c.Registered() {
			return false
		}
	}
	return true
}

// Identity returns the agent's identity service, which verifies tokens
// for the Nova API.
func (a *Agent) Identity() *identity.Service { return a.identity }

// seedDevIdentity creates devstack's projects, users and roles once a
// dev cluster has a leader (Identity.SeedDev, idempotent), learns the
// admin user and project that anonymous requests act as, and lifts that
// project's instance, core and RAM quotas: what the dev cloud's open API
// boots counts in its usage, but a laptop's cloud of simulated hosts
// should not stop at Nova's default of 10 instances (demo keeps them, to
// try quotas with).
func (a *Agent) seedDevIdentity() error {
	var resp structs.GenericResponse
	if err := a.self.RPC("Identity.SeedDev", &structs.IdentitySeedRequest{}, &resp); err != nil {
		return err
	}
	if err := a.learnDevOwner(); err != nil {
		return err
	}
	lift := &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeProject, ID: a.devOwner.Load().ProjectID, Force: true,
		Limits: map[string]int64{structs.QuotaInstances: structs.QuotaUnlimited, structs.QuotaCores: structs.QuotaUnlimited, structs.QuotaRAM: structs.QuotaUnlimited}}
	var out structs.QuotaResponse
	return a.self.RPC("Quota.Update", lift, &out)
}

// novaServers lists the region's control-plane servers and whether
// gossip sees them alive, for the Compute API's os-services.
func (a *Agent) novaServers() []nova.ServerMember {
	var out []nova.ServerMember
	for _, m := range a.gossip.Members() {
		if m.Meta.Role == gossip.RoleServer && m.Meta.Region == a.config.Region {
			out = append(out, nova.ServerMember{Name: m.Name, Alive: m.Status == gossip.StatusAlive})
		}
	}
	return out
}

// Leave leaves the cluster gracefully: a leader steps down first.
func (a *Agent) Leave() error {
	if a.server != nil {
		return a.server.Leave(5 * time.Second)
	}
	if a.gossip != nil {
		return a.gossip.Leave(5 * time.Second)
	}
	return nil
}

// Shutdown stops the HTTP server, the server and gossip. Idempotent.
func (a *Agent) Shutdown() error {
	a.shutdownOnce.Do(func() {
		close(a.shutdownCh)
		if a.httpServer != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = a.httpServer.Shutdown(ctx)
			cancel()
		}
		a.stopConsoles()
		a.stopMetadata()
		a.stopS3()
		for _, dp := range a.dataplanes {
			dp.Stop()
		}
		for _, c := range a.clients {
			_ = c.Shutdown()
		}
		for _, d := range a.drivers {
			_ = d.Close()
		}
		if a.server != nil {
			_ = a.server.Shutdown()
		} else if a.gossip != nil {
			_ = a.gossip.Shutdown()
		}
		if a.connPool != nil {
			_ = a.connPool.Shutdown()
		}
		if a.identity != nil {
			a.identity.Stop()
		}
		a.bgWG.Wait()
		if a.config.DevMode && a.config.devTempDir {
			_ = os.RemoveAll(a.config.DataDir)
		}
	})
	return nil
}

// GossipAddr is the ip:port others use to join this agent's pool.
func (a *Agent) GossipAddr() string { return a.gossip.Addr() }
