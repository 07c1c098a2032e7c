package guest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// Error types (structs.Error.Type) the Compute API maps to Nova's
// answers.
const (
	// TypeNotSupported: the host's driver cannot do it at all, or the
	// instance's guest agent does not answer (Nova's 501).
	TypeNotSupported = "GuestNotSupported"
	// TypeNotReady: the instance is not running on a host now (409).
	TypeNotReady = "InstanceNotReady"
	// TypeFailed: the driver tried and failed (Nova's 409
	// InstancePasswordSetFailed).
	TypeFailed = "GuestCallFailed"
	// TypeHostUnavailable: the host's agent cannot be reached (Nova's
	// 400 ComputeServiceUnavailable).
	TypeHostUnavailable = "ComputeServiceUnavailable"
)

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// Config configures the guest service of one agent.
type Config struct {
	RPC RPC
	// Local returns the virt driver of a host this agent runs, or nil
	// when the host is another agent's.
	Local func(hostID string) virt.Driver
	// AgentAddr returns the HTTP address (host:port) of the agent that
	// is the named gossip member, for forwarding.
	AgentAddr func(gossipMember string) (string, bool)
	Logger    hclog.Logger
	// Client makes the forwarded requests (default: 60 s timeout, more
	// than a driver's guest agent call takes to give up).
	Client *http.Client
	// Scheme is how the agents' HTTP ports are reached: "http" (the
	// default) or "https" (tls { http = true }).
	Scheme string
}

// Service answers guest calls for the cluster's instances and hosts:
// the ones this agent runs itself, the others by forwarding.
type Service struct {
	cfg    Config
	logger hclog.Logger
	client *http.Client
}

// New builds a guest service.
func New(cfg Config) *Service {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if cfg.Local == nil {
		cfg.Local = func(string) virt.Driver { return nil }
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.Scheme == "" {
		cfg.Scheme = "http"
	}
	return &Service{cfg: cfg, logger: logger, client: client}
}

// target is where a call is carried out: the local driver, or the
// address of the agent that runs the host.
type target struct {
	host   *structs.Host
	driver virt.Driver
	addr   string
}

// locateHost finds the agent that runs a host.
func (s *Service) locateHost(hostID string) (*target, error) {
	var out structs.SingleHostResponse
	if err := s.cfg.RPC.RPC("Host.Get", &structs.HostSpecificRequest{HostID: hostID}, &out); err != nil {
		return nil, err
	}
	h := out.Host
	if h == nil {
		return nil, structs.Errorf(structs.KindNotFound, "host %s not found", hostID)
	}
	if drv := s.cfg.Local(h.ID); drv != nil {
		return &target{host: h, driver: drv}, nil
	}
	addr, ok := "", false
	if s.cfg.AgentAddr != nil && h.GossipMember != "" {
		addr, ok = s.cfg.AgentAddr(h.GossipMember)
	}
	if !ok || addr == "" {
		return nil, hostUnavailable("Compute service of %s is unavailable at this time.", h.Name)
	}
	return &target{host: h, addr: addr}, nil
}

// locateInstance finds the instance and the agent of its host.
func (s *Service) locateInstance(ctx context.Context, instanceID string) (*structs.Instance, *target, error) {
	var out structs.SingleInstanceResponse
	// The caller's token, which may read the instance (the agent's own
	// credential reads only its own hosts' instances).
	args := structs.InstanceSpecificRequest{InstanceID: instanceID}
	args.AuthToken = httpx.Token(ctx)
	if err := s.cfg.RPC.RPC("Instance.Get", &args, &out); err != nil {
		return nil, nil, err
	}
	inst := out.Instance
	if inst == nil {
		return nil, nil, structs.Errorf(structs.KindNotFound, "instance %s not found", instanceID)
	}
	if inst.HostID == "" {
		return nil, nil, notReady("Instance %s is not ready: it is not on a host", instanceID)
	}
	t, err := s.locateHost(inst.HostID)
	if err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, nil, notReady("Instance %s is not ready: its host is unknown", instanceID)
		}
		return nil, nil, err
	}
	return inst, t, nil
}

// SetAdminPassword sets the administrator's password in an instance's
// guest: root, or the image's os_admin_user, or Administrator for a
// Windows image, as Nova's libvirt driver picks.
func (s *Service) SetAdminPassword(ctx context.Context, instanceID, password string) error {
	inst, t, err := s.locateInstance(ctx, instanceID)
	if err != nil {
		return err
	}
	if t.driver == nil {
		return s.forwardPassword(ctx, t.addr, instanceID, password)
	}
	return s.localPassword(ctx, t.driver, inst, password)
}

// AdminUser is the guest user whose password changePassword sets.
func AdminUser(imageProperties map[string]string) string {
	if u := imageProperties["os_admin_user"]; u != "" {
		return u
	}
	if strings.EqualFold(imageProperties["os_type"], "windows") {
		return "Administrator"
	}
	return "root"
}

func (s *Service) localPassword(ctx context.Context, drv virt.Driver, inst *structs.Instance, password string) error {
	ps, ok := drv.(virt.PasswordSetter)
	if !ok || !drv.Capabilities().SetPassword {
		return notSupported("the %s driver cannot set passwords in guests", drv.Name())
	}
	user := AdminUser(inst.ImageProperties)
	err := ps.SetAdminPassword(ctx, inst.ID, user, password)
	if err == nil {
		s.logger.Info("set the administrator password in the guest", "instance", inst.ID, "user", user)
		return nil
	}
	s.logger.Warn("setting the administrator password failed", "instance", inst.ID, "user", user, "error", err)
	switch {
	case errors.Is(err, virt.ErrGuestAgentUnavailable), errors.Is(err, virt.ErrNotSupported):
		return notSupported("setting the password of instance %s: %v", inst.ID, err)
	case errors.Is(err, virt.ErrNotFound):
		return notReady("Instance %s is not ready: it is not on its host's hypervisor", inst.ID)
	case errors.Is(err, virt.ErrInvalidState):
		return notReady("Instance %s is not ready: it is not running", inst.ID)
	}
	// The driver's words are logged above; the caller gets Nova's,
	// which cannot reveal anything of the password.
	return &structs.Error{Kind: structs.KindConflict, Type: TypeFailed,
		Msg: fmt.Sprintf("Failed to set admin password on %s because error setting admin password", inst.ID)}
}

// HostUptime returns uptime(1)'s line for the machine of a host.
func (s *Service) HostUptime(ctx context.Context, hostID string) (string, error) {
	t, err := s.locateHost(hostID)
	if err != nil {
		return "", err
	}
	if t.driver == nil {
		return s.forwardUptime(ctx, t.addr, hostID)
	}
	return localUptime(ctx, t.driver)
}

func localUptime(ctx context.Context, drv virt.Driver) (string, error) {
	hu, ok := drv.(virt.HostUptimer)
	if !ok {
		return "", notSupported("the %s driver cannot tell its host's uptime", drv.Name())
	}
	up, err := hu.HostUptime(ctx)
	if errors.Is(err, virt.ErrNotSupported) {
		return "", notSupported("%v", err)
	}
	if err != nil {
		return "", fmt.Errorf("uptime of the %s driver's host: %w", drv.Name(), err)
	}
	return up, nil
}

func notSupported(format string, args ...any) error {
	return &structs.Error{Kind: structs.KindInvalid, Type: TypeNotSupported, Msg: fmt.Sprintf(format, args...)}
}

func notReady(format string, args ...any) error {
	return &structs.Error{Kind: structs.KindConflict, Type: TypeNotReady, Msg: fmt.Sprintf(format, args...)}
}

func hostUnavailable(format string, args ...any) error {
	return &structs.Error{Kind: structs.KindUnavailable, Type: TypeHostUnavailable, Msg: fmt.Sprintf(format, args...)}
}

// ErrorType is the Type of a guest call's error ("" for none of ours).
func ErrorType(err error) string {
	var e *structs.Error
	if errors.As(err, &e) {
		return e.Type
	}
	return ""
}
