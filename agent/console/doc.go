// Package console is the agent's side of remote consoles (Nova's
// novncproxy, serial proxy and xvpvncproxy, and the console-output path
// of nova-compute): it asks the local virt driver where an instance's
// console listens, has the servers issue a one-time token for it, and
// proxies a client that presents the token — a noVNC websocket to the
// VNC server, a websocket to the serial console, or a plain TCP VNC
// client after a CONNECT line. An agent that does not host the instance
// forwards the request to the agent that does.
//
// It must not hold authoritative state (tokens are the servers'), nor
// know any API's wire format beyond its own small native JSON.
package console
