package join_test

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/internal/tacknode"
	"github.com/tack-run/tack/server/remote/join"
)

// The tests share one cluster client: protoactor's remote.Start sets
// gRPC's global logger, racing with the gRPC goroutines of a remote
// started before, so a test process holds one remote. Each test starts
// its own three members on the same three automanaged ports (ports), one
// test after another, and the client follows them there, through a
// proxy in front of each port (proxies).
var (
	tackBin string
	ports   [3]int
	// proxies are the client's seeds: each forwards to the automanaged
	// port of the same index.
	proxies [3]*tcpProxy
	client  *join.Cluster
	sys     *actor.ActorSystem
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
	if out, err := exec.Command("go", "build", "-o", tackBin, "../../../cmd/tack").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build: %v\n%s", err, out)
	}
	seeds := make([]string, len(ports))
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return 0, err
		}
		if proxies[i], err = newTCPProxy(net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i]))); err != nil {
			return 0, err
		}
		seeds[i] = proxies[i].Addr()
	}
	sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}), actor.WithDeadLetterThrottleInterval(10*time.Millisecond))
	client, err = join.Client(sys, "127.0.0.1", join.Config{Name: clusterName, Seeds: seeds, Refresh: refresh, TTL: ttl})
	if err != nil {
		return 0, err
	}
	code := m.Run()
	join.Close(client)
	sys.Shutdown()
	for _, p := range proxies {
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

// freePort is a loopback port free at the time of asking.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
