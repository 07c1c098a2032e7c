package gossip

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// ErrShutdown is returned by operations on a Pool after Shutdown.
var ErrShutdown = errors.New("gossip: pool is shut down")

// updateTimeout bounds how long UpdateMeta waits for memberlist to finish
// broadcasting the new metadata.
const updateTimeout = 5 * time.Second

// reapEvery is how often at most the member view is walked for dead or
// left members to forget.
const reapEvery = time.Second

// Pool is this process's membership in the gossip pool. It is safe for
// concurrent use.
type Pool struct {
	cfg     Config
	logger  hclog.Logger
	session uint64 // random per Pool; see wireMeta.Session

	ml         *memberlist.Memberlist
	broadcasts *memberlist.TransmitLimitedQueue
	bindPort   int
	// reapAfter mirrors memberlist's GossipToTheDeadTime: after that long
	// memberlist forgets a dead or left node, and so do we.
	reapAfter time.Duration
	// confirmTimeout bounds ConfirmGone's connection attempt.
	confirmTimeout time.Duration

	// lifecycleMu serialises Leave, UpdateMeta and Shutdown so memberlist
	// never sees Leave or UpdateNode after Shutdown (Leave would panic).
	lifecycleMu sync.Mutex
	shutdown    bool

	// metaMu guards localMeta/metaBytes, read by memberlist via NodeMeta.
	metaMu    sync.Mutex
	localMeta Meta
	metaBytes []byte

	// mu guards the member view, leave intents and the events channel.
	// Lock order: memberlist's node lock, then mu. Nothing holding mu may
	// call into memberlist.
	mu           sync.Mutex
	members      map[string]*memberState
	alive        atomic.Int64 // members alive or suspect; see numAlive
	lastReap     time.Time
	intents      map[string]intentRecord
	events       chan Event
	eventsClosed bool
	dropped      uint64

	// keyring encrypts gossip; nil when encryption is off.
	keyring *memberlist.Keyring
	queryState
}

// memberState is the Pool's record of one member.
type memberState struct {
	Member
	session uint64    // from the member's metadata
	since   time.Time // last status change, for reaping dead/left members
}

// New creates the local memberlist instance, binds its listeners and
// returns a Pool containing only the local node. Call Join to meet others.
func New(cfg Config) (*Pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:       cfg,
		logger:    cfg.Logger,
		session:   rand.Uint64() | 1, // never 0, which means "no session"
		localMeta: cfg.Meta,
		members:   make(map[string]*memberState),
		intents:   make(map[string]intentRecord),
		events:    make(chan Event, cfg.EventBuffer),
	}
	if p.metaBytes, err = encodeMeta(cfg.Meta, p.session); err != nil {
		return nil, err
	}

	if p.keyring, err = cfg.loadKeyring(); err != nil {
		return nil, err
	}
	p.queries = make(map[uint64]*pendingQuery)
	mlConf := cfg.memberlistConfig()
	mlConf.Keyring = p.keyring
	p.reapAfter = mlConf.GossipToTheDeadTime
	p.confirmTimeout = confirmTimeoutFor(mlConf.ProbeTimeout)
	p.broadcasts = &memberlist.TransmitLimitedQueue{
		NumNodes:       p.numAlive,
		RetransmitMult: mlConf.RetransmitMult,
	}
	mlConf.Delegate = &delegate{p: p}
	mlConf.Events = &eventDelegate{p: p}

	tr, err := newTransport(cfg.BindAddr, cfg.BindPort, mlConf.Logger)
	if err != nil {
		return nil, err
	}
	mlConf.Transport = tr
	mlConf.BindPort = tr.port()
	if cfg.BindPort == 0 || mlConf.AdvertisePort == 0 {
		// As memberlist does with a port it picked: advertise it.
		mlConf.AdvertisePort = tr.port()
	}
	ml, err := memberlist.Create(mlConf)
	if err != nil {
		_ = tr.Shutdown()
		return nil, fmt.Errorf("gossip: start memberlist on %s:%d: %w", cfg.BindAddr, cfg.BindPort, err)
	}
	p.ml = ml
	p.bindPort = mlConf.BindPort
	p.logger.Debug("gossip pool started", "node", cfg.NodeName, "addr", p.Addr())
	return p, nil
}

// Join contacts the given "ip:port" (or "host:port") addresses and merges
// state with them. It returns how many were reached; the error is non-nil
// only if none were.
func (p *Pool) Join(addrs []string) (int, error) {
	if p.isShutdown() {
		return 0, ErrShutdown
	}
	if len(addrs) == 0 {
		return 0, errors.New("gossip: join: no addresses given")
	}
	n, err := p.ml.Join(addrs)
	if err != nil {
		return n, fmt.Errorf("gossip: join %v: %w", addrs, err)
	}
	return n, nil
}

// Members returns every member the local node knows, sorted by Name,
// including the local node and dead or left members that memberlist still
// remembers (it forgets them after GossipToTheDeadTime: 15 s with Fast,
// 30 s otherwise).
func (p *Pool) Members() []Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reapLocked(time.Now())
	out := make([]Member, 0, len(p.members))
	for _, ms := range p.members {
		out = append(out, ms.Member)
	}
	sortMembers(out)
	return out
}

// Servers returns the alive servers in region ("" = every region), sorted
// by Name. This is what agents use to find an RPC endpoint.
func (p *Pool) Servers(region string) []Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Member
	for _, ms := range p.members {
		if ms.Status != StatusAlive || ms.Meta.Role != RoleServer {
			continue
		}
		if region != "" && ms.Meta.Region != region {
			continue
		}
		out = append(out, ms.Member)
	}
	sortMembers(out)
	return out
}

// Local returns the local node as the pool sees it, including its current
// metadata and status (StatusLeft after Leave).
func (p *Pool) Local() Member {
	p.mu.Lock()
	ms, ok := p.members[p.cfg.NodeName]
	var m Member
	if ok {
		m = ms.Member
	}
	p.mu.Unlock()
	if !ok {
		// Memberlist reports the local join synchronously inside Create,
		// so this is unreachable; answer sensibly anyway.
		n := p.ml.LocalNode()
		m = Member{Name: n.Name, Addr: n.Addr, Port: int(n.Port), Status: StatusAlive}
	}
	p.metaMu.Lock()
	m.Meta = p.localMeta // authoritative even before gossip echoes it
	p.metaMu.Unlock()
	return m
}

// Events returns the membership event stream. The channel has
// Config.EventBuffer capacity and is closed by Shutdown.
//
// Delivery never blocks memberlist: events are produced inside memberlist's
// delegate callbacks while it holds its node lock, and a blocked send there
// would stall gossip and failure detection for the whole process. When the
// buffer is full the oldest queued event is dropped (and a warning logged)
// so the consumer always sees the most recent changes. Consumers that must
// not miss anything should reconcile against Members periodically, which
// is always complete.
func (p *Pool) Events() <-chan Event {
	return p.events
}

// DroppedEvents is how many events the full buffer has dropped since the
// pool started. A consumer that must not miss a change (the servers
// marking crashed agents' hosts down) reconciles against Members when it
// grows.
func (p *Pool) DroppedEvents() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// UpdateMeta replaces the local metadata and gossips it. Peers see an
// EventUpdate. It waits (up to 5 s) until memberlist has finished
// broadcasting; on timeout the new metadata is still in effect locally and
// will keep spreading, but an error is returned.
func (p *Pool) UpdateMeta(m Meta) error {
	if err := m.validate(); err != nil {
		return err
	}
	buf, err := encodeMeta(m, p.session)
	if err != nil {
		return err
	}
	p.lifecycleMu.Lock()
	defer p.lifecycleMu.Unlock()
	if p.shutdown {
		return ErrShutdown
	}
	p.metaMu.Lock()
	p.localMeta, p.metaBytes = m, buf
	p.metaMu.Unlock()
	if err := p.ml.UpdateNode(updateTimeout); err != nil {
		return fmt.Errorf("gossip: update metadata: %w", err)
	}
	return nil
}

// BindPort returns the port actually bound (useful with BindPort 0).
func (p *Pool) BindPort() int {
	return p.bindPort
}

// Addr returns the advertised "ip:port" other members should Join.
func (p *Pool) Addr() string {
	n := p.Local()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(n.Port))
}

// NumMembers returns how many members are not dead or left, including the
// local node.
func (p *Pool) NumMembers() int {
	return p.ml.NumMembers()
}

// Leave leaves the pool gracefully, so peers report EventLeave and
// StatusLeft rather than a failure. It first gossips a leave intent, then
// has memberlist broadcast its leave, spending at most timeout in total
// (timeout <= 0 waits for the broadcasts without limit). Leave does not
// stop the listeners: call Shutdown afterwards.
func (p *Pool) Leave(timeout time.Duration) error {
	p.lifecycleMu.Lock()
	defer p.lifecycleMu.Unlock()
	if p.shutdown {
		return ErrShutdown
	}
	start := time.Now()
	if err := p.broadcastLeaveIntent(timeout / 2); err != nil {
		// Not fatal: peers just risk seeing a failure instead of a leave.
		p.logger.Warn("leave intent not fully broadcast; peers may report this node as failed", "error", err)
	}
	remaining := time.Duration(0)
	if timeout > 0 {
		remaining = max(timeout-time.Since(start), time.Millisecond)
	}
	if err := p.ml.Leave(remaining); err != nil {
		return fmt.Errorf("gossip: leave: %w", err)
	}
	return nil
}

// Shutdown stops gossip and closes the Events channel without telling
// peers, who will eventually declare this node dead unless Leave was called
// first. It is idempotent.
func (p *Pool) Shutdown() error {
	p.lifecycleMu.Lock()
	defer p.lifecycleMu.Unlock()
	if p.shutdown {
		return nil
	}
	p.shutdown = true
	err := p.ml.Shutdown()

	p.mu.Lock()
	// Memberlist goroutines may still be finishing a callback; emitLocked
	// checks eventsClosed so they never send on the closed channel.
	p.eventsClosed = true
	close(p.events)
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("gossip: shutdown: %w", err)
	}
	return nil
}

func (p *Pool) isShutdown() bool {
	p.lifecycleMu.Lock()
	defer p.lifecycleMu.Unlock()
	return p.shutdown
}

// numAlive counts members not dead or left. It sizes the broadcast
// retransmit limit, so memberlist asks for it at every gossip round and
// probe: it reads a counter kept as statuses change rather than walking
// the members (our own view rather than memberlist's, because it may be
// called from inside memberlist callbacks).
func (p *Pool) numAlive() int {
	return int(p.alive.Load())
}

// setStatusLocked changes a member's status, keeping numAlive's count.
// Caller holds p.mu.
func (p *Pool) setStatusLocked(ms *memberState, st Status, now time.Time) {
	if counted(ms.Status) {
		p.alive.Add(-1)
	}
	if counted(st) {
		p.alive.Add(1)
	}
	ms.Status, ms.since = st, now
}

// counted reports whether numAlive counts a member with status st.
func counted(st Status) bool { return st == StatusAlive || st == StatusSuspect }

// reapLocked forgets dead and left members once memberlist has forgotten
// them too, so the view does not grow without bound. The local node is
// kept. It walks every member, so it runs at most once per reapEvery: in a
// pool of a thousand, a join storm brings each member a thousand events.
func (p *Pool) reapLocked(now time.Time) {
	if now.Sub(p.lastReap) < reapEvery {
		return
	}
	p.lastReap = now
	for name, ms := range p.members {
		if name == p.cfg.NodeName {
			continue
		}
		if (ms.Status == StatusDead || ms.Status == StatusLeft) && now.Sub(ms.since) > p.reapAfter {
			delete(p.members, name)
		}
	}
	for name, in := range p.intents {
		if now.Sub(in.at) > intentTTL {
			delete(p.intents, name)
		}
	}
}

// emitLocked queues ev without ever blocking; see Events for the policy.
// Caller holds p.mu, which makes this the only sender, so after dropping
// one event there is guaranteed room.
func (p *Pool) emitLocked(ev Event) {
	if p.eventsClosed {
		return
	}
	for {
		select {
		case p.events <- ev:
			return
		default:
		}
		select {
		case old := <-p.events:
			p.dropped++
			// Log the first drop and then every 100th so a stuck consumer
			// is visible without flooding the log.
			if p.dropped%100 == 1 {
				p.logger.Warn("gossip event buffer full; dropping oldest event",
					"dropped_type", old.Type, "dropped_member", old.Member.Name, "dropped_total", p.dropped)
			}
		default:
		}
	}
}

func sortMembers(ms []Member) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
}
