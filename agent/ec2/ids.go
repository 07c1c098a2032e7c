package ec2

import (
	"strings"
)

// EC2 ids are derived from Stratus's UUIDs, never stored: a prefix
// ("i-", "ami-", "r-") and the UUID's first 17 hex digits, EC2's long
// id form. The mapping is a pure function, so every agent answers the
// same id for the same instance with no table to replicate, and an id
// is resolved by matching it against the project's records (the caller
// lists them anyway for EC2's filters). 17 hex digits are 68 bits of a
// random UUID: a clash within one project's records would need about
// 2^34 of them; the resolver refuses an ambiguous id rather than pick.
const idDigits = 17

// ec2ID is the EC2 id of a Stratus UUID with prefix.
func ec2ID(prefix, uuid string) string {
	hex := strings.ReplaceAll(strings.ToLower(uuid), "-", "")
	if len(hex) > idDigits {
		hex = hex[:idDigits]
	}
	return prefix + "-" + hex
}

// validID reports whether id is prefix- and 17 lowercase hex digits (or
// EC2's short form of 8).
func validID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"-")
	if !ok || len(rest) != idDigits && len(rest) != 8 {
		return false
	}
	for _, c := range rest {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// instanceID, imageID and reservationID are the EC2 ids of Stratus's
// records.
func instanceID(uuid string) string    { return ec2ID("i", uuid) }
func imageID(uuid string) string       { return ec2ID("ami", uuid) }
func reservationID(uuid string) string { return ec2ID("r", uuid) }
