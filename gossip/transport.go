package gossip

import (
	"errors"
	"fmt"
	"log"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/hashicorp/memberlist"
)

const (
	// maxPacketSize is the largest UDP datagram a member can receive.
	maxPacketSize = 65536
	// udpReadBuffer is the socket receive buffer asked for (halved until
	// the kernel accepts it), as memberlist's own transport does.
	udpReadBuffer = 2 << 20
	// bindAttempts bounds the retries when a kernel-picked TCP port turns
	// out to be taken for UDP.
	bindAttempts = 10
)

// transport is memberlist's UDP packet and TCP stream transport, as
// memberlist.NetTransport is, with one difference that matters when many
// members share a machine: NetTransport allocates a fresh 64 KiB buffer
// for every packet it receives and hands memberlist a slice of it, so a
// 100-byte probe costs 64 KiB of garbage. Here each packet is read into
// one reusable buffer and copied out at its own size.
type transport struct {
	logger   *log.Logger
	tcp      *net.TCPListener
	udp      *net.UDPConn
	packetCh chan *memberlist.Packet
	streamCh chan net.Conn
	shutdown atomic.Bool
	wg       sync.WaitGroup
}

var _ memberlist.NodeAwareTransport = (*transport)(nil)

// newTransport binds TCP and UDP on the same addr:port. With port 0 the
// kernel picks the TCP port and UDP binds the same one, retrying with a
// new port when UDP finds it taken.
func newTransport(addr string, port int, logger *log.Logger) (*transport, error) {
	ip := net.ParseIP(addr)
	if ip == nil {
		return nil, fmt.Errorf("gossip: bind address %q is not an IP address", addr)
	}
	attempts := 1
	if port == 0 {
		attempts = bindAttempts
	}
	var err error
	for range attempts {
		var t *transport
		if t, err = bindTransport(ip, port, logger); err == nil {
			return t, nil
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, err
}

func bindTransport(ip net.IP, port int, logger *log.Logger) (*transport, error) {
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: port})
	if err != nil {
		return nil, fmt.Errorf("gossip: listen on TCP %s port %d: %w", ip, port, err)
	}
	port = tcp.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: port})
	if err != nil {
		_ = tcp.Close()
		return nil, fmt.Errorf("gossip: listen on UDP %s port %d: %w", ip, port, err)
	}
	for size := udpReadBuffer; size > 0; size /= 2 {
		if err = udp.SetReadBuffer(size); err == nil {
			break
		}
	}
	if err != nil {
		_ = tcp.Close()
		_ = udp.Close()
		return nil, fmt.Errorf("gossip: size the UDP receive buffer: %w", err)
	}
	t := &transport{
		logger:   logger,
		tcp:      tcp,
		udp:      udp,
		packetCh: make(chan *memberlist.Packet),
		streamCh: make(chan net.Conn),
	}
	t.wg.Add(2)
	go t.acceptStreams()
	go t.readPackets()
	return t, nil
}

// port is the bound port (TCP and UDP).
func (t *transport) port() int { return t.tcp.Addr().(*net.TCPAddr).Port }

// FinalAdvertiseAddr picks the address other members reach this one at:
// the one given, else the bound IP, else (bound to 0.0.0.0) a private IP
// of this machine, as memberlist's own transport does.
func (t *transport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	if ip != "" {
		addr := net.ParseIP(ip)
		if addr == nil {
			return nil, 0, fmt.Errorf("gossip: advertise address %q is not an IP address", ip)
		}
		if v4 := addr.To4(); v4 != nil {
			addr = v4
		}
		return addr, port, nil
	}
	bound := t.tcp.Addr().(*net.TCPAddr).IP
	if !bound.IsUnspecified() {
		return bound, t.port(), nil
	}
	private, err := privateIP()
	if err != nil {
		return nil, 0, err
	}
	return private, t.port(), nil
}

// WriteTo sends one packet.
func (t *transport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress sends one packet. An "ip:port" address is parsed
// without a resolver lookup; a name is resolved.
func (t *transport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	if ap, err := netip.ParseAddrPort(a.Addr); err == nil {
		_, err = t.udp.WriteToUDPAddrPort(b, ap)
		return time.Now(), err
	}
	udpAddr, err := net.ResolveUDPAddr("udp", a.Addr)
	if err != nil {
		return time.Time{}, err
	}
	_, err = t.udp.WriteTo(b, udpAddr)
	return time.Now(), err
}

// PacketCh delivers received packets.
func (t *transport) PacketCh() <-chan *memberlist.Packet { return t.packetCh }

// DialTimeout opens a stream.
func (t *transport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout opens a stream.
func (t *transport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.Dial("tcp", a.Addr)
}

// StreamCh delivers accepted streams.
func (t *transport) StreamCh() <-chan net.Conn { return t.streamCh }

// Shutdown closes the listeners and waits for their goroutines.
func (t *transport) Shutdown() error {
	if !t.shutdown.CompareAndSwap(false, true) {
		return nil
	}
	errTCP := t.tcp.Close()
	errUDP := t.udp.Close()
	t.wg.Wait()
	return errors.Join(errTCP, errUDP)
}

// acceptStreams hands accepted TCP connections to memberlist, backing
// off on accept errors (such as running out of descriptors).
func (t *transport) acceptStreams() {
	defer t.wg.Done()
	var delay time.Duration
	for {
		conn, err := t.tcp.AcceptTCP()
		if err != nil {
			if t.shutdown.Load() {
				return
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			t.logger.Printf("[ERR] memberlist: Error accepting TCP connection: %v", err)
			time.Sleep(delay)
			continue
		}
		delay = 0
		t.streamCh <- conn
	}
}

// readPackets reads each datagram into one reusable buffer and hands
// memberlist a copy of its own size: memberlist keeps the slice (queued
// for its handler), so it cannot be the read buffer itself.
func (t *transport) readPackets() {
	defer t.wg.Done()
	buf := make([]byte, maxPacketSize)
	for {
		n, addr, err := t.udp.ReadFromUDP(buf)
		ts := time.Now()
		if err != nil {
			if t.shutdown.Load() {
				return
			}
			t.logger.Printf("[ERR] memberlist: Error reading UDP packet: %v", err)
			continue
		}
		if n < 1 {
			continue
		}
		t.packetCh <- &memberlist.Packet{
			Buf:       append([]byte(nil), buf[:n]...),
			From:      addr,
			Timestamp: ts,
		}
	}
}

// privateIP returns a private address of this machine, chosen as
// memberlist's own transport chooses it, for a member bound to 0.0.0.0.
func privateIP() (net.IP, error) {
	ip, err := sockaddr.GetPrivateIP()
	if err != nil {
		return nil, fmt.Errorf("gossip: list interface addresses: %w", err)
	}
	if ip == "" {
		return nil, errors.New("gossip: no private IP address found to advertise; set an advertise address")
	}
	addr := net.ParseIP(ip)
	if addr == nil {
		return nil, fmt.Errorf("gossip: private address %q is not an IP address", ip)
	}
	return addr, nil
}
