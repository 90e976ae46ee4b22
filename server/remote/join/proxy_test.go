package join_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// seedProxy forwards the TCP connections made to a loopback port of its
// own to a member's automanaged endpoint: the test's client polls the
// members through proxies, so that a test can make one member's health
// endpoint stop answering the client alone (cut) while the member runs
// on, and the members still see it.
type seedProxy struct {
	ln     net.Listener
	target string
	cut    atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newSeedProxy listens on a free loopback port and forwards to target.
func newSeedProxy(target string) (*seedProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &seedProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is where the proxy listens.
func (p *seedProxy) Addr() string { return p.ln.Addr().String() }

// Cut makes the proxy close every connection, open or new, until Mend:
// the member does not answer the client's polls.
func (p *seedProxy) Cut() {
	p.cut.Store(true)
	p.closeConns()
}

// Mend forwards again.
func (p *seedProxy) Mend() { p.cut.Store(false) }

// Close stops the proxy and waits for its goroutines.
func (p *seedProxy) Close() {
	p.ln.Close()
	p.closeConns()
	p.wg.Wait()
}

func (p *seedProxy) accept() {
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
func (p *seedProxy) forward(c net.Conn) {
	defer c.Close()
	t, err := net.Dial("tcp", p.target)
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

func (p *seedProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *seedProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *seedProxy) closeConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}
