// Package drivers is the registry of virt drivers: it builds the fake,
// libvirt, VMware or Ironic driver by name from plain options, so that
// the agent, which reads the operator's configuration, needs to know
// only virt's interfaces and this package.
//
// It owns the mapping from a driver's name and options to a running
// driver, nothing else: it must not parse configuration files or know
// the agent's config types (the agent turns its config blocks into
// Options, with durations already parsed), and it must never be imported
// by a driver.
package drivers
