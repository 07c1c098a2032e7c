// Package tlsutil is Stratus's built-in certificate authority (the role
// of Nova's nova-cert): it creates ECDSA certificate authorities and signs
// certificates whose DNS names tie them to a role and a region —
// server.<region>.<domain> for servers, client.<region>.<domain> for
// client agents and cli.<region>.<domain> for command-line users — so a
// peer that verifies the name can tell a server from a client. It also
// signs the user certificates of Nova's os-certificates API.
//
// It only builds and parses PEM material in memory: it must not read or
// write files, talk to a server or keep state. The cloudctl tls
// commands write what it returns; servers keep the cluster CA in
// replicated state.
package tlsutil
