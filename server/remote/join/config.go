package join

import (
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Providers protoactor offers that a Tack cluster can use.
const (
	// Automanaged: each member serves its own description over HTTP
	// (GET /_health on Config.Port) and polls every address in
	// Config.Seeds; no other service is needed.
	Automanaged = "automanaged"
	// Etcd: members register under a key of an etcd cluster whose
	// endpoints are Config.Seeds.
	Etcd = "etcd"
)

// etcdBaseKey is where members register in etcd:
// <etcdBaseKey>/<cluster>/<cluster>@<member id>.
const etcdBaseKey = "/tack"

// DefaultPort is the port of a member's automanaged endpoint unless told
// otherwise (protoactor's own default).
const DefaultPort = 6330

// DefaultRefresh is how often the automanaged provider polls the members.
const DefaultRefresh = time.Second

// Config names a cluster and says how its members find each other.
// Members and clients of one cluster use the same Name, Provider and
// Seeds.
type Config struct {
	// Name is the cluster's name.
	Name string
	// Provider is Automanaged (the default when empty) or Etcd.
	Provider string
	// Seeds are, for Automanaged, the HOST:PORT of every member's
	// automanaged endpoint; for Etcd, the etcd endpoints.
	Seeds []string
	// Port is where this member's automanaged endpoint listens (on every
	// interface: protoactor's provider binds 0.0.0.0); DefaultPort when
	// 0. Clients do not serve one.
	Port int
	// Refresh is how often the automanaged provider polls the members
	// (DefaultRefresh when 0): a member that dies leaves the others'
	// view within about this long.
	Refresh time.Duration
}

// Validate says what is wrong with c, naming the setting.
func (c Config) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("the cluster needs a name")
	}
	switch c.Provider {
	case "", Automanaged, Etcd:
	default:
		return fmt.Errorf("cluster provider %q: want %s or %s", c.Provider, Automanaged, Etcd)
	}
	if len(c.Seeds) == 0 {
		return fmt.Errorf("cluster %s needs seeds: the automanaged endpoints of its members (HOST:PORT, ...) or the etcd endpoints", c.Name)
	}
	for _, s := range c.Seeds {
		if s == "" || strings.ContainsAny(s, " \t,") {
			return fmt.Errorf("cluster seed %q is not an address", s)
		}
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("cluster port %d: must be from 0 to 65535", c.Port)
	}
	return nil
}

// provider builds c's protoactor cluster provider.
func (c Config) provider() (cluster.ClusterProvider, error) {
	if c.Provider == Etcd {
		p, err := etcd.NewWithConfig(etcdBaseKey, clientv3.Config{Endpoints: c.Seeds, DialTimeout: 5 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("etcd %s: %w", strings.Join(c.Seeds, ","), err)
		}
		return p, nil
	}
	port := c.Port
	if port == 0 {
		port = DefaultPort
	}
	return automanaged.NewWithConfig(c.refresh(), port, c.Seeds...), nil
}

// clientProvider builds the cluster provider of a client of c: for
// automanaged a seedPoller, which never blocks a member for good (see
// seeds.go); for etcd protoactor's provider, which drops only a member
// whose lease lapsed, and that member rejoins under a new id.
func (c Config) clientProvider() (cluster.ClusterProvider, error) {
	if c.Provider == Etcd {
		return c.provider()
	}
	return &seedPoller{cfg: c, refresh: c.refresh()}, nil
}

// refresh is how often the members are polled.
func (c Config) refresh() time.Duration {
	if c.Refresh <= 0 {
		return DefaultRefresh
	}
	return c.Refresh
}

// Cluster is the protoactor cluster configuration of c for a member's
// actor system whose remote is remoteCfg, with kinds (the session kind).
// It validates c and builds its provider.
func (c Config) Cluster(remoteCfg *remote.Config, kinds ...*cluster.Kind) (*cluster.Config, error) {
	return c.configure(c.provider, remoteCfg, kinds...)
}

// configure validates c and builds its protoactor cluster configuration
// with the provider that provider builds.
func (c Config) configure(provider func() (cluster.ClusterProvider, error), remoteCfg *remote.Config, kinds ...*cluster.Kind) (*cluster.Config, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, err := provider()
	if err != nil {
		return nil, err
	}
	return cluster.Configure(c.Name, p, disthash.New(), remoteCfg, cluster.WithKinds(kinds...)), nil
}
