// Command openaisrv is the local OpenAI-compatible server of the peer
// benchmark harness (bench/internal/openaisrv): it streams the same short
// reply to every Chat Completions request. bench/run starts it once, as a
// process of its own pinned to a CPU, for the http-turns scenario, and
// points every driver's OpenAI client at it.
//
// # Usage
//
//	openaisrv -addr 127.0.0.1:0 -url-file /tmp/url
//
// Once listening, it writes its base URL (http://HOST:PORT/v1) to
// -url-file, if given, and to stderr. On SIGINT or SIGTERM it stops, and
// prints to stderr how many requests it answered on how many connections
// (a client that keeps its connections alive needs few).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tack-run/tack/bench/internal/openaisrv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	urlFile := flag.String("url-file", "", "file to write the base URL to once listening")
	flag.Parse()
	if err := run(*addr, *urlFile); err != nil {
		fmt.Fprintln(os.Stderr, "openaisrv:", err)
		os.Exit(1)
	}
}

func run(addr, urlFile string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := openaisrv.New()
	var conns atomic.Int64
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}}
	url := "http://" + ln.Addr().String() + "/v1"
	if urlFile != "" {
		// Written whole, then renamed, so that a reader polling for the
		// file never sees half of it.
		tmp := filepath.Join(filepath.Dir(urlFile), "."+filepath.Base(urlFile)+".tmp")
		if err := os.WriteFile(tmp, []byte(url+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, urlFile); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "openaisrv: listening on", url)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if e := <-served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	fmt.Fprintf(os.Stderr, "openaisrv: answered %d requests on %d connections\n", s.Requests(), conns.Load())
	return err
}
