package gossip

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/stratus-cloud/stratus/structs"
)

// User message types of the keyring fan-out. They travel over
// memberlist's TCP user messages, which are encrypted with the keyring
// itself, so only members holding a current key can send or read them.
const (
	msgKeyringRequest  byte = 'K'
	msgKeyringResponse byte = 'k'
)

// DefaultKeyringTimeout bounds how long a keyring operation waits for the
// members' answers.
const DefaultKeyringTimeout = 30 * time.Second

// keyringRequest asks a member to change or list its keyring.
type keyringRequest struct {
	ID   uint64    `codec:"i"`
	From string    `codec:"f"`
	Op   KeyringOp `codec:"o"`
	Key  []byte    `codec:"k"`
}

// keyringReply is a member's answer.
type keyringReply struct {
	ID    uint64   `codec:"i"`
	Node  string   `codec:"n"`
	Keys  []string `codec:"k"`
	Error string   `codec:"e"`
}

// KeyringResponse sums up a keyring operation across the pool.
type KeyringResponse struct {
	// Members is how many alive members were asked (the local one
	// included); Responses how many answered.
	Members, Responses int
	// Errors maps a member's name to why it failed or did not answer.
	Errors map[string]string
	// Keys counts, per base64 key, the members holding it; PrimaryKeys
	// counts the members encrypting with it. Filled for every operation,
	// from each member's keyring after the operation.
	Keys        map[string]int
	PrimaryKeys map[string]int
}

// pendingQuery collects the replies of one keyring operation.
type pendingQuery struct {
	ch chan keyringReply
}

// Keyring performs op on every alive member's keyring (this one first)
// and waits up to timeout (DefaultKeyringTimeout when 0) for their
// answers. key is base64 and ignored by KeyringList. Rotation without
// downtime is install (everyone can decrypt the new key), use
// (everyone encrypts with it), then remove the old key. The error is for
// a bad request or a local failure; per-member failures are in Errors.
func (p *Pool) Keyring(op KeyringOp, key string, timeout time.Duration) (*KeyringResponse, error) {
	if p.isShutdown() {
		return nil, ErrShutdown
	}
	if p.keyring == nil {
		return nil, ErrEncryptionDisabled
	}
	if _, err := ParseKeyringOp(string(op)); err != nil {
		return nil, err
	}
	var raw []byte
	if op != KeyringList {
		var err error
		if raw, err = DecodeKey(key); err != nil {
			return nil, err
		}
	}
	if timeout <= 0 {
		timeout = DefaultKeyringTimeout
	}
	resp := &KeyringResponse{Errors: map[string]string{}, Keys: map[string]int{}, PrimaryKeys: map[string]int{}}
	resp.Members = 1
	keys, err := p.applyLocal(op, raw)
	if err != nil {
		return nil, err
	}
	resp.add(keyringReply{Node: p.cfg.NodeName, Keys: keys})

	nodes := p.reachable()
	req := keyringRequest{ID: rand.Uint64(), From: p.cfg.NodeName, Op: op, Key: raw}
	pq := &pendingQuery{ch: make(chan keyringReply, len(nodes))}
	p.queryMu.Lock()
	p.queries[req.ID] = pq
	p.queryMu.Unlock()
	defer func() {
		p.queryMu.Lock()
		delete(p.queries, req.ID)
		p.queryMu.Unlock()
	}()

	msg, err := encodeMsg(msgKeyringRequest, &req)
	if err != nil {
		return nil, err
	}
	waiting := map[string]bool{}
	for _, n := range nodes {
		if n.Name == p.cfg.NodeName {
			continue
		}
		resp.Members++
		if err := p.ml.SendReliable(n, msg); err != nil {
			resp.Errors[n.Name] = fmt.Sprintf("send request: %v", err)
			continue
		}
		waiting[n.Name] = true
	}
	pq.collect(waiting, timeout, resp)
	return resp, nil
}

// collect adds the replies of the members in waiting to resp until all
// have answered or timeout passes; the silent ones become errors.
func (pq *pendingQuery) collect(waiting map[string]bool, timeout time.Duration, resp *KeyringResponse) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for len(waiting) > 0 {
		select {
		case r := <-pq.ch:
			if !waiting[r.Node] {
				continue
			}
			delete(waiting, r.Node)
			resp.add(r)
		case <-timer.C:
			for n := range waiting {
				resp.Errors[n] = "no response within " + timeout.String()
			}
			return
		}
	}
}

func (r *KeyringResponse) add(rep keyringReply) {
	r.Responses++
	if rep.Error != "" {
		r.Errors[rep.Node] = rep.Error
		return
	}
	for i, k := range rep.Keys {
		r.Keys[k]++
		if i == 0 {
			r.PrimaryKeys[k]++
		}
	}
}

// SortedKeys lists the keys of a response, most widely installed first.
func (r *KeyringResponse) SortedKeys() []string {
	out := make([]string, 0, len(r.Keys))
	for k := range r.Keys {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if r.Keys[out[i]] != r.Keys[out[j]] {
			return r.Keys[out[i]] > r.Keys[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// reachable returns the members that are alive or suspect, as fresh
// memberlist nodes built from the pool's own view: the *Node values
// memberlist.Members returns are shared with its internals (see the
// package doc).
func (p *Pool) reachable() []*memberlist.Node {
	var out []*memberlist.Node
	for _, m := range p.Members() {
		if m.Status != StatusAlive && m.Status != StatusSuspect {
			continue
		}
		out = append(out, &memberlist.Node{Name: m.Name, Addr: m.Addr, Port: uint16(m.Port)})
	}
	return out
}

func encodeMsg(typ byte, body any) ([]byte, error) {
	buf, err := structs.Encode(body)
	if err != nil {
		return nil, fmt.Errorf("gossip: encode message: %w", err)
	}
	return append([]byte{typ}, buf...), nil
}

// handleKeyringRequest applies a peer's keyring request and answers it.
// It runs on its own goroutine: sending the answer must not hold up
// memberlist's message handling.
func (p *Pool) handleKeyringRequest(body []byte) {
	var req keyringRequest
	if err := structs.Decode(body, &req); err != nil || req.From == "" {
		p.logger.Warn("ignoring malformed keyring request", "error", err)
		return
	}
	reply := keyringReply{ID: req.ID, Node: p.cfg.NodeName}
	if keys, err := p.applyLocal(req.Op, req.Key); err != nil {
		reply.Error = err.Error()
	} else {
		reply.Keys = keys
		if req.Op != KeyringList {
			p.logger.Info("gossip keyring changed", "op", req.Op, "by", req.From)
		}
	}
	msg, err := encodeMsg(msgKeyringResponse, &reply)
	if err != nil {
		return
	}
	for _, n := range p.reachable() {
		if n.Name == req.From {
			if err := p.ml.SendReliable(n, msg); err != nil {
				p.logger.Warn("answer keyring request", "to", req.From, "error", err)
			}
			return
		}
	}
	p.logger.Warn("keyring request from an unknown member", "from", req.From)
}

// handleKeyringReply routes an answer to the operation waiting for it.
func (p *Pool) handleKeyringReply(body []byte) {
	var rep keyringReply
	if err := structs.Decode(body, &rep); err != nil {
		p.logger.Warn("ignoring malformed keyring reply", "error", err)
		return
	}
	p.queryMu.Lock()
	pq := p.queries[rep.ID]
	p.queryMu.Unlock()
	if pq == nil {
		return // late: the operation gave up on this member
	}
	select {
	case pq.ch <- rep:
	default:
		p.logger.Warn("dropping keyring reply: too many at once", "from", rep.Node)
	}
}

// queryState is embedded in Pool: the keyring and the pending keyring
// operations.
type queryState struct {
	// keyringMu serialises keyring changes and their persistence.
	keyringMu sync.Mutex
	queryMu   sync.Mutex
	queries   map[uint64]*pendingQuery
}
