// Package archtest checks the project's structural rules as tests: every
// package has a doc comment, each package imports only what DESIGN.md
// allows it to, and simulators and fakes (govmomi's simulator,
// virt/ironic/ironictest) are imported by tests only; that each room
// (client/, the HTTP APIs, virt/) keeps to its own; and that every package
// doc says what the package must not do. It must not hold code beyond
// its tests.
package archtest
