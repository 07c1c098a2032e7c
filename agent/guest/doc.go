// Package guest is the agent's side of the calls Nova makes
// synchronously to the compute service that runs an instance or a host:
// setting an instance's administrator password through its guest agent
// (changePassword) and reading a hypervisor host's uptime
// (os-hypervisors/{id}/uptime). It calls the local virt driver for the
// hosts this agent runs and forwards a request to the agent that runs
// the host otherwise, as agent/console does for console output.
//
// The password passes through memory only: it is never written to the
// servers' state.
package guest
