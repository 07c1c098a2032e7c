// Package virt defines the contract between the hypervisor agent and a
// virtualisation backend: a small core Driver interface every backend
// implements, optional interfaces for what only some backends can do
// (pause, suspend, rescue, resize, migrate, live migration, snapshot,
// consoles, hot-plug, power-state events), a typed Capabilities
// struct, and the errors every driver returns (ErrNotFound,
// ErrNotSupported, ErrInvalidState), which are all a caller may test.
// Drivers live in subpackages (virt/fake, virt/libvirt, …); virttest is
// the conformance suite they must pass; virt/drivers builds one by name.
// Nothing outside virt/ but tests imports a concrete driver.
//
// It must not know about Raft, RPC or the state store: a driver sees one
// host and the instances on it, nothing more.
package virt
