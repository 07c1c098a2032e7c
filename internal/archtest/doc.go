// Package archtest checks the project's structural rules as tests: every
// package has a doc comment, each package imports only what DESIGN.md
// allows it to, and simulators and fakes (govmomi's simulator,
// virt/ironic/ironictest) are imported by tests only. It has no code
// beyond its tests.
package archtest
