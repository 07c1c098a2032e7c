// Package gossip owns Stratus's cluster membership: one
// hashicorp/memberlist pool that servers and hypervisor agents (clients)
// all join, plus the small metadata record (Meta) each member carries.
//
// It answers "who is out there, what are they, how do I reach them, and
// did they leave or fail?". Everything built on top of that answer lives
// elsewhere: the server package reacts to Events to add or remove Raft
// peers and the agent package uses Servers to find an RPC endpoint. This
// package must not import or know about Raft, RPC endpoints, the FSM or
// the state store; keeping it that small means it can be tested on
// loopback in isolation and reused by every process role.
//
// Design notes:
//
//   - Memberlist calls its event delegates while holding its internal
//     node lock, so the delegates here never call back into memberlist
//     and never block: events go to a bounded channel that drops the
//     oldest event when the consumer falls behind (see Pool.Events).
//   - Memberlist's public *Node.State is never populated (the real state
//     lives in an unexported field), so a graceful leave cannot be told
//     apart from a failure by looking at the node handed to NotifyLeave.
//     Instead, Pool.Leave first gossips a small "leave intent" tagged with
//     a per-process session id; receivers classify the following
//     departure as EventLeave if a matching intent was seen and as
//     EventFailed otherwise. This is the same approach Serf takes. The
//     intent cannot rely on gossip alone: memberlist retransmits a
//     broadcast only RetransmitMult × ⌈log10(n+1)⌉ times, piggybacked on
//     whatever packet goes out next (probes and acks to one peer, or
//     gossip to a member already dead), so some peer may never hear it.
//     Leave therefore sends the intent straight to each live member
//     before memberlist's leave (a receiver queues both datagrams in
//     order), gossips it as well, and every push/pull carries the recent
//     intents (Delegate.LocalState), so a member that missed one corrects
//     a failure into a leave within a push/pull interval.
//   - The member view returned by Members is maintained from delegate
//     callbacks rather than memberlist.Members, because the *Node values
//     memberlist returns are shared with its internals and reading them
//     after the call races with updates.
//   - Encryption uses a memberlist keyring that can hold several keys
//     (Config.SecretKey seeds it, Config.KeyringFile persists it).
//     Pool.Keyring changes every alive member's keyring: memberlist has
//     no query mechanism, so the request goes to each member as a TCP
//     user message (encrypted with the keyring itself) and each answers
//     the same way, as Serf's key queries do.
//   - The transport (transport.go) is memberlist's UDP-and-TCP one but
//     reads every packet into one reused buffer instead of a fresh
//     64 KiB one, which matters when many members share a machine (the
//     host-death benchmark runs a thousand in one process).
//   - Pool.ConfirmGone lets a caller double-check a failure before acting
//     on it: a failed member whose gossip port still accepts a TCP
//     connection is alive but slow, not gone.
package gossip
