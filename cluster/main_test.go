package cluster_test

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	actorcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/internal/tacknode"
)

// The tests share one cluster client: protoactor's remote.Start sets
// gRPC's global logger, racing with the gRPC goroutines of a remote
// started before, so a test process holds one remote. Each test starts
// its own three members, one test after another, and the client follows
// them: its seeds are proxies, one per member (proxies), and the
// members' seeds are proxies of their own (seeds), which forward to the
// automanaged port member i listens on now. That port is picked afresh
// each time the member starts (pickPort): a port picked once for the
// whole package and left unbound between tests could be taken meanwhile
// by any other process on the machine (a test of another package
// listening on :0, or a connection's local port), and the member would
// then fail to start.
var (
	tackBin string
	// proxies are the client's seeds, seeds the members': both forward
	// to the automanaged port of the member of the same index.
	proxies, seeds [3]*tcpProxy
	client         *cluster.Cluster
	sys            *actor.ActorSystem
	// view is the members the client saw last, as address/id.
	view atomic.Pointer[[]string]
)

// clusterName is the cluster of every test.
const clusterName = "tack-test"

// refresh is how often members and client poll each other.
const refresh = 250 * time.Millisecond

// ttl is how long a member that does not answer stays in the view (the
// registration of an etcd or postgres member lasts): registrationTTL.
const ttl = 3 * time.Second

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "tack-join-test")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	tackBin = filepath.Join(dir, "tack")
	if out, err := exec.Command("go", "build", "-o", tackBin, "github.com/tack-run/tack/cmd/tack").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build: %v\n%s", err, out)
	}
	clientSeeds := make([]string, len(proxies))
	for i := range proxies {
		// Nothing listens at the target until member i starts (pickPort).
		if proxies[i], err = newTCPProxy("127.0.0.1:1"); err != nil {
			return 0, err
		}
		if seeds[i], err = newTCPProxy("127.0.0.1:1"); err != nil {
			return 0, err
		}
		clientSeeds[i] = proxies[i].Addr()
	}
	sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}), actor.WithDeadLetterThrottleInterval(10*time.Millisecond))
	sys.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*actorcluster.ClusterTopology); ok {
			v := make([]string, len(t.Members))
			for i, m := range t.Members {
				v[i] = m.Address() + "/" + m.Id
			}
			view.Store(&v)
		}
	})
	client, err = cluster.Client(sys, "127.0.0.1", cluster.Config{Name: clusterName, Seeds: clientSeeds, Refresh: refresh, TTL: ttl})
	if err != nil {
		return 0, err
	}
	code := m.Run()
	cluster.Close(client)
	sys.Shutdown()
	for _, p := range append(proxies[:], seeds[:]...) {
		p.Close()
	}
	if code == 0 {
		if err := tacknode.Leaked(tacknode.GRPCLeftovers...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code, nil
}

// pickPort picks a free port for member i's automanaged endpoint and
// points the proxies of member i there.
func pickPort(i int) (int, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	proxies[i].Retarget(addr)
	seeds[i].Retarget(addr)
	return port, nil
}

// freePort is a loopback port free at the time of asking.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
