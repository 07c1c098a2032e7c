// Package spec parses and validates HCL instance specs into domain types
// (structs.InstanceGroupSpec): `variable` blocks with their types,
// defaults and validations, values from -var, -var-file and the
// environment, `locals`, the HCL standard-library functions plus file()
// and base64encode(), and one `instance "NAME" { … }` block. Every error
// is an HCL diagnostic that points at a file, line and column.
//
// It works on local input only: it must not talk to servers (resolving
// flavors and images and planning are the servers' job), and it reads no
// file but the spec, its var files and what file() asks for. It imports
// nothing of this module but structs.
package spec
