package cluster_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// tcpProxy forwards the TCP connections made to a loopback port of its
// own to a target, until cut: the test's client polls the members'
// automanaged endpoints through proxies, so that a test can make one
// member's health endpoint stop answering the client alone while the
// member runs on; members reach PostgreSQL through one to lose it.
type tcpProxy struct {
	ln     net.Listener
	target atomic.Pointer[string]
	cut    atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newTCPProxy listens on a free loopback port and forwards to target.
func newTCPProxy(target string) (*tcpProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &tcpProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	p.Retarget(target)
	p.wg.Go(p.accept)
	return p, nil
}

// Retarget makes the proxy forward the connections made from now on to
// target.
func (p *tcpProxy) Retarget(target string) { p.target.Store(&target) }

// Addr is where the proxy listens.
func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

// Cut makes the proxy close every connection, open or new, until Mend.
func (p *tcpProxy) Cut() {
	p.cut.Store(true)
	p.closeConns()
}

// Mend forwards again.
func (p *tcpProxy) Mend() { p.cut.Store(false) }

// Close stops the proxy and waits for its goroutines.
func (p *tcpProxy) Close() {
	p.ln.Close()
	p.closeConns()
	p.wg.Wait()
}

func (p *tcpProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.cut.Load() {
			c.Close()
			continue
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// forward copies between c and a new connection to the target until
// either side ends.
func (p *tcpProxy) forward(c net.Conn) {
	defer c.Close()
	t, err := net.Dial("tcp", *p.target.Load())
	if err != nil {
		return
	}
	defer t.Close()
	p.track(c, t)
	defer p.untrack(c, t)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(t, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, t); done <- struct{}{} }()
	<-done
	c.Close()
	t.Close()
	<-done
}

func (p *tcpProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *tcpProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *tcpProxy) closeConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}
