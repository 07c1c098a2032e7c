// Package nova serves OpenStack's Compute API v2.1 (Nova's wire format)
// so that unmodified OpenStack clients — python-openstackclient,
// novaclient, gophercloud — can drive Stratus. Nova's legacy v2 API
// (/v2) is the same API at microversion 2.1, as in Nova.
//
// The package owns the Nova wire format at the edge and nothing else: it
// holds no state, and every request becomes RPCs against the servers with
// the structs types. Wire shapes (Nova's JSON bodies, microversioned
// fields, fault bodies, links) are built here and never passed inward.
//
// A request goes through the same steps for every resource: a request id,
// microversion negotiation (X-OpenStack-Nova-API-Version or
// OpenStack-API-Version: compute X.Y), Keystone token verification,
// routing through the shared kit internal/route (each resource declares
// route.Route values: method, path, microversion range, access, policy
// rule), Nova's default policy, and Nova's fault bodies for errors (the
// kit's error-kind statuses). Each resource lives in its own file with
// its routes and views.
//
// It must not keep a matcher, a status table or a way of passing the
// caller's token of its own: those are internal/route's, shared with the
// other APIs, and every RPC goes out as the caller (route.AsCaller).
package nova
