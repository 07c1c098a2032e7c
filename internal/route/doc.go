// Package route is the HTTP routing kit every API the agent serves is
// built with (native /v1, Compute, Identity, Image, Network, S3,
// metadata): one Route type that states a route's method and path, the
// microversion range it exists in, who may call it and the policy rule a
// refusal names; one matcher (Table) that answers a route, 404 or 405
// with the methods allowed; one table from error kinds to HTTP statuses
// (Statuses) that each API starts from and adjusts to its ecosystem;
// and one way to call the servers as the caller (AsCaller).
//
// It renders nothing: every API writes its own bodies and errors in its
// own format (Nova's faults, Keystone's, Glance's, S3's XML). It must
// not import an API package, the servers or a virt driver.
package route
