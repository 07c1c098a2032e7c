// Package ironictest is a stateful fake of OpenStack Ironic's Bare Metal
// API v1 for tests: a real HTTP server on 127.0.0.1 that keeps nodes and
// enforces Ironic's provision-state machine (enroll → manageable →
// available → deploying → wait call-back → active → deleting → cleaning →
// available), answering 400 to an invalid transition, 409 while a node is
// locked by its "conductor" (during every transitional state, or when a
// test holds the lock) and 404 for a missing node, with Ironic's error
// bodies. Transitions advance on their own after a short step delay, as a
// conductor would. It must never be imported outside tests
// (internal/archtest checks that).
package ironictest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Provision states the fake uses (Ironic's names).
const (
	StateEnroll     = "enroll"
	StateVerifying  = "verifying"
	StateManageable = "manageable"
	StateAvailable  = "available"
	StateDeploying  = "deploying"
	StateWait       = "wait call-back"
	StateActive     = "active"
	StateDeployFail = "deploy failed"
	StateDeleting   = "deleting"
	StateCleaning   = "cleaning"
	StateError      = "error"
)

// Power states.
const (
	PowerOn  = "power on"
	PowerOff = "power off"
)

// NodeSpec describes a node to enroll.
type NodeSpec struct {
	Name          string
	ResourceClass string
	CPUs          int
	MemoryMB      int
	LocalGB       int
	CPUArch       string
}

// Node is the fake's record of a node, in Ironic's JSON shape.
type Node struct {
	UUID                 string         `json:"uuid"`
	Name                 string         `json:"name"`
	PowerState           string         `json:"power_state"`
	TargetPowerState     *string        `json:"target_power_state"`
	ProvisionState       string         `json:"provision_state"`
	TargetProvisionState *string        `json:"target_provision_state"`
	Maintenance          bool           `json:"maintenance"`
	MaintenanceReason    string         `json:"maintenance_reason,omitempty"`
	LastError            *string        `json:"last_error"`
	Reservation          *string        `json:"reservation"`
	Driver               string         `json:"driver"`
	Properties           map[string]any `json:"properties"`
	InstanceInfo         map[string]any `json:"instance_info"`
	InstanceUUID         *string        `json:"instance_uuid"`
	Extra                map[string]any `json:"extra"`
	ResourceClass        string         `json:"resource_class"`
	Traits               []string       `json:"traits"`
	// ConfigDrive is what the last deploy received (not in Ironic's
	// JSON: tests read it through Server.Node).
	ConfigDrive any `json:"-"`
}

// Server is the fake Ironic API. Its exported fields may be set before
// the first request.
type Server struct {
	// URL is the API's root, http://127.0.0.1:PORT (the client adds /v1).
	URL string
	// StepDelay is how long each transitional state lasts (default 20ms).
	StepDelay time.Duration

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	nodes    map[string]*Node
	order    []string
	held     map[string]bool   // locks tests hold
	failNext map[string]string // node → last_error of its next deploy
	timers   []*time.Timer
	closed   bool
	requests map[string]int // "METHOD path-kind" → count
	tokens   map[string]bool
}

// New starts a fake Ironic on a random port of 127.0.0.1 and stops it at
// the end of the test.
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ironictest: listen: %v", err)
	}
	s := &Server{
		URL: "http://" + ln.Addr().String(), StepDelay: 20 * time.Millisecond,
		ln: ln, nodes: make(map[string]*Node), held: make(map[string]bool),
		failNext: make(map[string]string), requests: make(map[string]int), tokens: make(map[string]bool),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and every pending transition.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for _, tm := range s.timers {
		tm.Stop()
	}
	s.mu.Unlock()
	_ = s.srv.Close()
}

// Enroll adds a node in state enroll, powered off, and returns its uuid.
func (s *Server) Enroll(spec NodeSpec) string {
	if spec.CPUArch == "" {
		spec.CPUArch = "x86_64"
	}
	id := uuid.NewString()
	n := &Node{
		UUID: id, Name: spec.Name, PowerState: PowerOff, ProvisionState: StateEnroll,
		Driver: "fake-hardware", ResourceClass: spec.ResourceClass,
		Properties: map[string]any{
			"cpus": spec.CPUs, "memory_mb": spec.MemoryMB, "local_gb": spec.LocalGB, "cpu_arch": spec.CPUArch,
		},
		InstanceInfo: map[string]any{}, Extra: map[string]any{}, Traits: []string{},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[id] = n
	s.order = append(s.order, id)
	return id
}

// AddAvailable enrolls a node and moves it, synchronously, through
// manageable to available, as an operator would with `manage` and
// `provide`.
func (s *Server) AddAvailable(spec NodeSpec) string {
	id := s.Enroll(spec)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[id].ProvisionState = StateAvailable
	return id
}

// Node returns a copy of a node, or nil.
func (s *Server) Node(id string) *Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[id]
	if n == nil {
		return nil
	}
	c := *n
	c.InstanceInfo = cloneMap(n.InstanceInfo)
	return &c
}

// SetMaintenance puts a node in maintenance or takes it out.
func (s *Server) SetMaintenance(id string, on bool, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[id]; n != nil {
		n.Maintenance, n.MaintenanceReason = on, reason
	}
}

// FailNextDeploy makes the node's next deploy end in "deploy failed"
// with lastError.
func (s *Server) FailNextDeploy(id, lastError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[id] = lastError
}

// HoldLock locks a node as a busy conductor would, until the returned
// function is called: meanwhile every change to it answers 409.
func (s *Server) HoldLock(id string) (release func()) {
	s.mu.Lock()
	s.held[id] = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.held, id)
		s.mu.Unlock()
	}
}

// Requests counts the requests received of a kind, such as
// "PUT provision", "PUT power", "PATCH node" or "409".
func (s *Server) Requests(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[kind]
}

// Tokens returns the Keystone tokens (X-Auth-Token) requests carried.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tokens))
	for t := range s.tokens {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// locked reports whether a node's conductor holds it: during a
// transition (target state set) or while a test holds the lock.
func (s *Server) locked(n *Node) bool {
	return s.held[n.UUID] || n.TargetProvisionState != nil || n.TargetPowerState != nil
}

// after runs f under the lock after the step delay, unless closed.
func (s *Server) after(f func()) {
	tm := time.AfterFunc(s.StepDelay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.closed {
			f()
		}
	})
	s.timers = append(s.timers, tm)
}

// ironicError writes Ironic's error body: a JSON string inside JSON.
func ironicError(w http.ResponseWriter, code int, format string, args ...any) {
	fault := map[string]any{"faultstring": fmt.Sprintf(format, args...), "faultcode": "Client", "debuginfo": nil}
	if code >= 500 {
		fault["faultcode"] = "Server"
	}
	inner, _ := json.Marshal(fault)
	writeJSON(w, code, map[string]string{"error_message": string(inner)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-OpenStack-Ironic-API-Version", "1.58")
	w.WriteHeader(code)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// serve routes /v1/nodes[...]
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "v1" || parts[1] != "nodes" {
		ironicError(w, http.StatusNotFound, "The resource could not be found.")
		return
	}
	parts = parts[2:]
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		s.tokens[tok] = true
	}
	switch {
	case len(parts) == 0 || (len(parts) == 1 && parts[0] == "detail"):
		if r.Method != http.MethodGet {
			ironicError(w, http.StatusMethodNotAllowed, "Method not allowed.")
			return
		}
		s.list(w, r)
		return
	}
	n := s.find(parts[0])
	if n == nil {
		ironicError(w, http.StatusNotFound, "Node %s could not be found.", parts[0])
		return
	}
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, n)
	case len(parts) == 1 && r.Method == http.MethodPatch:
		s.count("PATCH node")
		s.patch(w, r, n)
	case len(parts) == 2 && parts[1] == "validate" && r.Method == http.MethodGet:
		s.validate(w, n)
	case len(parts) == 3 && parts[1] == "states" && parts[2] == "provision" && r.Method == http.MethodPut:
		s.count("PUT provision")
		s.provision(w, r, n)
	case len(parts) == 3 && parts[1] == "states" && parts[2] == "power" && r.Method == http.MethodPut:
		s.count("PUT power")
		s.power(w, r, n)
	default:
		ironicError(w, http.StatusNotFound, "The resource could not be found.")
	}
}

func (s *Server) count(kind string) { s.requests[kind]++ }

// find looks a node up by uuid or name.
func (s *Server) find(ref string) *Node {
	if n := s.nodes[ref]; n != nil {
		return n
	}
	for _, id := range s.order {
		if s.nodes[id].Name == ref && ref != "" {
			return s.nodes[id]
		}
	}
	return nil
}

// list answers GET /v1/nodes[/detail] with Ironic's filters.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	out := []*Node{}
	for _, id := range s.order {
		n := s.nodes[id]
		if v := q.Get("instance_uuid"); v != "" && (n.InstanceUUID == nil || *n.InstanceUUID != v) {
			continue
		}
		if v := q.Get("provision_state"); v != "" && n.ProvisionState != v {
			continue
		}
		if v := q.Get("resource_class"); v != "" && n.ResourceClass != v {
			continue
		}
		if v := q.Get("maintenance"); v != "" && (v == "true") != n.Maintenance {
			continue
		}
		if v := q.Get("associated"); v != "" && (v == "true") != (n.InstanceUUID != nil) {
			continue
		}
		out = append(out, n)
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
}

func (s *Server) conflictIfLocked(w http.ResponseWriter, n *Node) bool {
	if !s.locked(n) {
		return false
	}
	s.count("409")
	ironicError(w, http.StatusConflict, "Node %s is locked by host fake-conductor, please retry after the current operation is completed.", n.UUID)
	return true
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// patch applies a JSON patch to the node's instance_uuid, instance_info,
// extra, properties, maintenance, name and resource_class.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, n *Node) {
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ops); err != nil {
		ironicError(w, http.StatusBadRequest, "Invalid JSON patch: %v", err)
		return
	}
	if s.conflictIfLocked(w, n) {
		return
	}
	c := *n
	c.InstanceInfo, c.Extra, c.Properties = cloneMap(n.InstanceInfo), cloneMap(n.Extra), cloneMap(n.Properties)
	for _, op := range ops {
		if op.Op != "add" && op.Op != "replace" && op.Op != "remove" {
			ironicError(w, http.StatusBadRequest, "Invalid patch operation %q.", op.Op)
			return
		}
		if err := applyPatch(&c, op.Op, op.Path, op.Value); err != nil {
			code := http.StatusBadRequest
			if strings.Contains(err.Error(), "is associated with instance") {
				code = http.StatusConflict
			}
			ironicError(w, code, "%v", err)
			return
		}
	}
	*n = c
	writeJSON(w, http.StatusOK, n)
}

// fault is a message in Ironic's words, for its error body.
type fault string

func (f fault) Error() string { return string(f) }

// faultf formats a fault.
func faultf(format string, args ...any) error { return fault(fmt.Sprintf(format, args...)) }

// applyPatch applies one operation to a node copy.
func applyPatch(n *Node, op, path string, value any) error {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	remove := op == "remove"
	switch segs[0] {
	case "instance_uuid":
		if remove || value == nil {
			n.InstanceUUID = nil
			return nil
		}
		v, ok := value.(string)
		if !ok || uuid.Validate(v) != nil {
			return faultf("Invalid UUID for instance_uuid: %v", value)
		}
		if n.InstanceUUID != nil && *n.InstanceUUID != v {
			return faultf("Node %s is associated with instance %s.", n.UUID, *n.InstanceUUID)
		}
		n.InstanceUUID = &v
	case "instance_info", "extra", "properties":
		m := map[string]*map[string]any{"instance_info": &n.InstanceInfo, "extra": &n.Extra, "properties": &n.Properties}[segs[0]]
		switch {
		case len(segs) == 1 && remove:
			*m = map[string]any{}
		case len(segs) == 1:
			v, ok := value.(map[string]any)
			if !ok {
				return faultf("Invalid value for %s: must be an object", segs[0])
			}
			*m = v
		case remove:
			if _, ok := (*m)[segs[1]]; !ok {
				return faultf("can't remove non-existent object '%s'", segs[1])
			}
			delete(*m, segs[1])
		default:
			(*m)[segs[1]] = value
		}
	case "maintenance":
		b, _ := value.(bool)
		n.Maintenance = b && !remove
	case "name":
		s, _ := value.(string)
		n.Name = s
	case "resource_class":
		s, _ := value.(string)
		n.ResourceClass = s
	default:
		return faultf("Cannot patch %s.", path)
	}
	return nil
}

// validate answers GET validate: deploy needs instance_info.image_source.
func (s *Server) validate(w http.ResponseWriter, n *Node) {
	ok := map[string]any{"result": true}
	deploy := ok
	if src, _ := n.InstanceInfo["image_source"].(string); src == "" {
		deploy = map[string]any{"result": false, "reason": "Cannot validate image information for node because one or more parameters are missing from its instance_info: image_source"}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"boot": ok, "console": ok, "deploy": deploy, "inspect": ok, "management": ok,
		"network": ok, "power": ok, "raid": ok, "rescue": ok, "storage": ok,
	})
}

// transitions maps (state, target verb) to the states walked, the last
// one stable.
var transitions = map[[2]string][]string{
	{StateEnroll, "manage"}:           {StateVerifying, StateManageable},
	{StateManageable, "provide"}:      {StateCleaning, StateAvailable},
	{StateAvailable, "manage"}:        {StateManageable},
	{StateAvailable, "active"}:        {StateDeploying, StateWait, StateDeploying, StateActive},
	{StateDeployFail, "active"}:       {StateDeploying, StateWait, StateDeploying, StateActive},
	{StateActive, "rebuild"}:          {StateDeploying, StateWait, StateDeploying, StateActive},
	{StateActive, "deleted"}:          {StateDeleting, StateCleaning, StateAvailable},
	{StateDeployFail, "deleted"}:      {StateDeleting, StateCleaning, StateAvailable},
	{StateWait, "deleted"}:            {StateDeleting, StateCleaning, StateAvailable},
	{StateError, "deleted"}:           {StateDeleting, StateCleaning, StateAvailable},
	{"clean failed", "manage"}:        {StateManageable},
	{StateManageable, "clean"}:        {StateCleaning, StateManageable},
	{StateDeployFail, "deploy_abort"}: {StateDeployFail},
}

// provision answers PUT states/provision.
func (s *Server) provision(w http.ResponseWriter, r *http.Request, n *Node) {
	var body struct {
		Target      string `json:"target"`
		ConfigDrive any    `json:"configdrive"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Target == "" {
		ironicError(w, http.StatusBadRequest, "Invalid provision state request body.")
		return
	}
	if s.conflictIfLocked(w, n) {
		return
	}
	steps, ok := transitions[[2]string{n.ProvisionState, body.Target}]
	if !ok {
		ironicError(w, http.StatusBadRequest, "The requested action \"%s\" can not be performed on node \"%s\" while it is in state \"%s\".",
			body.Target, n.UUID, n.ProvisionState)
		return
	}
	if body.Target == "active" || body.Target == "rebuild" {
		if n.Maintenance {
			ironicError(w, http.StatusBadRequest, "The requested action \"%s\" can not be performed on node \"%s\" while it is in maintenance mode.", body.Target, n.UUID)
			return
		}
		if src, _ := n.InstanceInfo["image_source"].(string); src == "" {
			ironicError(w, http.StatusBadRequest, "Cannot validate image information for node %s because one or more parameters are missing from its instance_info: image_source.", n.UUID)
			return
		}
		n.ConfigDrive = body.ConfigDrive
		n.LastError = nil
	}
	s.walk(n, body.Target, steps)
	w.WriteHeader(http.StatusAccepted)
}

// walk moves n through steps, one per StepDelay, holding the lock until
// the last; deploys and tear-downs set the power state and a failing
// deploy stops in "deploy failed".
func (s *Server) walk(n *Node, target string, steps []string) {
	final := steps[len(steps)-1]
	tgt := final
	n.TargetProvisionState = &tgt
	var step func(i int)
	step = func(i int) {
		n.ProvisionState = steps[i]
		switch {
		case n.ProvisionState == StateWait && target != "deleted":
			if msg, ok := s.failNext[n.UUID]; ok {
				delete(s.failNext, n.UUID)
				n.ProvisionState, n.TargetProvisionState = StateDeployFail, nil
				n.LastError = &msg
				n.PowerState = PowerOff
				return
			}
		case n.ProvisionState == StateCleaning && target == "deleted":
			// Ironic forgets the instance when tear-down ends.
			n.InstanceUUID, n.InstanceInfo, n.ConfigDrive = nil, map[string]any{}, nil
			n.PowerState = PowerOff
		}
		if i == len(steps)-1 {
			n.TargetProvisionState = nil
			if final == StateActive {
				n.PowerState = PowerOn
			}
			return
		}
		s.after(func() { step(i + 1) })
	}
	step(0)
}

// power answers PUT states/power.
func (s *Server) power(w http.ResponseWriter, r *http.Request, n *Node) {
	var body struct {
		Target  string `json:"target"`
		Timeout int    `json:"timeout"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		ironicError(w, http.StatusBadRequest, "Invalid power state request body.")
		return
	}
	valid := []string{"power on", "power off", "rebooting", "soft power off", "soft rebooting"}
	if !slices.Contains(valid, body.Target) {
		ironicError(w, http.StatusBadRequest, "Invalid power state %q.", body.Target)
		return
	}
	if s.conflictIfLocked(w, n) {
		return
	}
	end := PowerOn
	if body.Target == "power off" || body.Target == "soft power off" {
		end = PowerOff
	}
	tgt := end
	n.TargetPowerState = &tgt
	s.after(func() {
		n.PowerState, n.TargetPowerState = end, nil
	})
	w.WriteHeader(http.StatusAccepted)
}
