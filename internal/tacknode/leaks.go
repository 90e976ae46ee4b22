package tacknode

import (
	"time"

	"go.uber.org/goleak"
)

// GRPCLeftovers are goleak options that ignore the gRPC client
// connections protoactor's remote leaves behind: when its endpoint writer
// fails to connect to a node that is gone (these tests stop nodes), it
// dials again without closing the connection it dialled before, and
// nothing closes that one later. Each such connection keeps these
// goroutines, retrying (the last is named resetTransportAndUnlock since
// gRPC 1.6x).
var GRPCLeftovers = []goleak.Option{
	goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	goleak.IgnoreTopFunction("google.golang.org/grpc.(*addrConn).resetTransport"),
	goleak.IgnoreTopFunction("google.golang.org/grpc.(*addrConn).resetTransportAndUnlock"),
}

// Leaked is goleak.Find with opts, asked again every 100 ms for up to
// Wait while goroutines are left. protoactor's remote and actor system
// return from Shutdown before their goroutines end (an endpoint writer
// still closing its gRPC connection), and on a busy machine that takes
// longer than goleak's own retries (about half a second): a goroutine
// that ends by itself is no leak. One still there after Wait is.
func Leaked(opts ...goleak.Option) error {
	deadline := time.Now().Add(Wait)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
