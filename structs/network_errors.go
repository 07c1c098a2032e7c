package structs

import (
	"errors"
	"fmt"
	"strings"
)

// Neutron's exception names, carried as the Type of networking errors so
// the Neutron API can answer {"NeutronError": {"type": …}} while every
// other edge shows the message alone.
const (
	ErrNetworkNotFound                    = "NetworkNotFound"
	ErrSubnetNotFound                     = "SubnetNotFound"
	ErrPortNotFound                       = "PortNotFound"
	ErrSecurityGroupNotFound              = "SecurityGroupNotFound"
	ErrSecurityGroupRuleNotFound          = "SecurityGroupRuleNotFound"
	ErrFloatingIPNotFound                 = "FloatingIPNotFound"
	ErrRouterNotFound                     = "RouterNotFound"
	ErrRouterInterfaceNotFound            = "RouterInterfaceNotFound"
	ErrRouterInterfaceNotFoundForSubnet   = "RouterInterfaceNotFoundForSubnet"
	ErrExternalGatewayForFloatingIP       = "ExternalGatewayForFloatingIPNotFound"
	ErrIPAddressGenerationFailure         = "IpAddressGenerationFailure"
	ErrIPAddressAlreadyAllocated          = "IpAddressAlreadyAllocated"
	ErrInvalidIPForSubnet                 = "InvalidIpForSubnet"
	ErrInvalidIPForNetwork                = "InvalidIpForNetwork"
	ErrMacAddressInUse                    = "MacAddressInUse"
	ErrNetworkInUse                       = "NetworkInUse"
	ErrSubnetInUse                        = "SubnetInUse"
	ErrPortInUse                          = "PortInUse"
	ErrServicePortInUse                   = "ServicePortInUse"
	ErrNetworkAmbiguous                   = "NetworkAmbiguous"
	ErrRouterInUse                        = "RouterInUse"
	ErrSecurityGroupInUse                 = "SecurityGroupInUse"
	ErrSecurityGroupRuleExists            = "SecurityGroupRuleExists"
	ErrSecurityGroupCannotRemoveDefault   = "SecurityGroupCannotRemoveDefault"
	ErrOverQuota                          = "OverQuota"
	ErrInvalidInput                       = "InvalidInput"
	ErrBadRequest                         = "BadRequest"
	ErrInvalidAllocationPool              = "InvalidAllocationPool"
	ErrOverlappingAllocationPools         = "OverlappingAllocationPools"
	ErrGatewayConflictWithAllocationPools = "GatewayConflictWithAllocationPools"
	ErrInvalidSharedSetting               = "InvalidSharedSetting"
	ErrFloatingIPPortAlreadyAssociated    = "FloatingIPPortAlreadyAssociated"
	ErrRouterInterfaceInUseByFloatingIP   = "RouterInterfaceInUseByFloatingIP"
	ErrRouterExternalGatewayInUseByFIP    = "RouterExternalGatewayInUseByFloatingIp"
	ErrDefaultExternalNetworkExists       = "DefaultExternalNetworkExists"
	ErrSegmentationIDInUse                = "SegmentationIdInUse"
	ErrTunnelIDInUse                      = "TunnelIdInUse"
	ErrVlanIDInUse                        = "VlanIdInUse"
	ErrFlatNetworkInUse                   = "FlatNetworkInUse"
	ErrNoNetworkAvailable                 = "NoNetworkAvailable"
	ErrPolicyNotAuthorized                = "PolicyNotAuthorized"
	ErrConflict                           = "Conflict"
	ErrNotFound                           = "NotFound"
)

// errorTypes are the types splitErrorType recognises after a kind.
var errorTypes = map[string]bool{}

func init() {
	for _, t := range []string{ErrNetworkNotFound, ErrSubnetNotFound, ErrPortNotFound, ErrSecurityGroupNotFound,
		ErrSecurityGroupRuleNotFound, ErrFloatingIPNotFound, ErrRouterNotFound, ErrRouterInterfaceNotFound,
		ErrRouterInterfaceNotFoundForSubnet, ErrExternalGatewayForFloatingIP, ErrIPAddressGenerationFailure,
		ErrIPAddressAlreadyAllocated, ErrInvalidIPForSubnet, ErrInvalidIPForNetwork, ErrMacAddressInUse,
		ErrNetworkInUse, ErrSubnetInUse, ErrPortInUse, ErrServicePortInUse, ErrNetworkAmbiguous, ErrRouterInUse, ErrSecurityGroupInUse,
		ErrSecurityGroupRuleExists, ErrSecurityGroupCannotRemoveDefault, ErrOverQuota, ErrInvalidInput,
		ErrBadRequest, ErrInvalidAllocationPool, ErrOverlappingAllocationPools,
		ErrGatewayConflictWithAllocationPools, ErrInvalidSharedSetting, ErrFloatingIPPortAlreadyAssociated,
		ErrRouterInterfaceInUseByFloatingIP, ErrRouterExternalGatewayInUseByFIP, ErrDefaultExternalNetworkExists,
		ErrSegmentationIDInUse, ErrTunnelIDInUse, ErrVlanIDInUse, ErrFlatNetworkInUse, ErrNoNetworkAvailable,
		ErrPolicyNotAuthorized, ErrConflict, ErrNotFound} {
		errorTypes[t] = true
	}
}

// NetErrorf builds an *Error of a kind with a Neutron type.
func NetErrorf(kind ErrorKind, typ, format string, args ...any) error {
	return &Error{Kind: kind, Type: typ, Msg: fmt.Sprintf(format, args...)}
}

// ErrorType returns the type of err ("" for none): from an *Error in its
// chain, or from the prefix after the kind in text that crossed an RPC
// hop.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Type
	}
	msg := err.Error()
	k := KindOf(err)
	if i := strings.Index(msg, string(k)+": "); i >= 0 && k != KindInternal {
		t, _ := splitErrorType(msg[i+len(k)+2:])
		return t
	}
	return ""
}

// splitErrorType splits "<Type>: <message>" when Type is a known type.
func splitErrorType(s string) (string, string) {
	if t, rest, ok := strings.Cut(s, ": "); ok && errorTypes[t] {
		return t, rest
	}
	return "", s
}

// Not-found errors of each kind, with Neutron's messages.
func NetNotFound(kind, id string) error {
	switch kind {
	case NetKindNetwork:
		return NetErrorf(KindNotFound, ErrNetworkNotFound, "Network %s could not be found.", id)
	case NetKindSubnet:
		return NetErrorf(KindNotFound, ErrSubnetNotFound, "Subnet %s could not be found.", id)
	case NetKindPort:
		return NetErrorf(KindNotFound, ErrPortNotFound, "Port %s could not be found.", id)
	case NetKindSecurityGroup:
		return NetErrorf(KindNotFound, ErrSecurityGroupNotFound, "Security group %s does not exist", id)
	case NetKindSecurityGroupRule:
		return NetErrorf(KindNotFound, ErrSecurityGroupRuleNotFound, "Security group rule %s does not exist", id)
	case NetKindFloatingIP:
		return NetErrorf(KindNotFound, ErrFloatingIPNotFound, "Floating IP %s could not be found", id)
	case NetKindRouter:
		return NetErrorf(KindNotFound, ErrRouterNotFound, "Router %s could not be found", id)
	}
	return NetErrorf(KindNotFound, ErrNotFound, "%s %s could not be found.", kind, id)
}

// NetOverQuota is Neutron's OverQuota error for resources.
func NetOverQuota(resources ...string) error {
	quoted := make([]string, len(resources))
	for i, r := range resources {
		quoted[i] = "'" + r + "'"
	}
	return NetErrorf(KindQuotaReached, ErrOverQuota, "Quota exceeded for resources: [%s].", strings.Join(quoted, ", "))
}
