// Package archtest checks the project's structural rules as tests: every
// package has a doc comment, and each package imports only what
// DESIGN.md allows it to. It has no code beyond its tests.
package archtest
