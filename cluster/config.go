package cluster

import (
	"fmt"
	"strings"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
)

// Providers protoactor offers that a Tack cluster can use.
const (
	// Automanaged: each member serves its own description over HTTP
	// (GET /_health on Config.Port) and polls every address in
	// Config.Seeds; no other service is needed.
	Automanaged = "automanaged"
	// Etcd: members register under a key of an etcd cluster whose
	// endpoints are Config.Seeds, with an etcd lease of Config.TTL.
	Etcd = "etcd"
	// Postgres: members register in a table of the PostgreSQL database
	// Config.Postgres names (the members' store), with a registration of
	// Config.TTL.
	Postgres = "postgres"
)

// etcdBaseKey is where members register in etcd:
// <etcdBaseKey>/<cluster>/<cluster>@<member id>.
const etcdBaseKey = "/tack"

// DefaultPort is the port of a member's automanaged endpoint unless told
// otherwise (protoactor's own default).
const DefaultPort = 6330

// DefaultRefresh is how often the automanaged provider polls the members,
// and how often the etcd and postgres providers renew a member's
// registration and list the members.
const DefaultRefresh = time.Second

// DefaultTTL is how long an etcd or postgres registration lasts unless
// renewed, and how long an automanaged member that does not answer in
// time stays in the views.
const DefaultTTL = 5 * time.Second

// Config names a cluster and says how its members find each other.
// Members and clients of one cluster use the same Name, Provider and
// Seeds.
type Config struct {
	// Name is the cluster's name.
	Name string
	// Provider is Automanaged (the default when empty), Etcd or
	// Postgres.
	Provider string
	// Seeds are, for Automanaged, the HOST:PORT of every member's
	// automanaged endpoint; for Etcd, the etcd endpoints; none for
	// Postgres.
	Seeds []string
	// Postgres is, for Postgres, the DSN of the database the members
	// register in (their store's).
	Postgres string
	// Port is where this member's automanaged endpoint listens (on every
	// interface, as protoactor's provider did); DefaultPort when 0.
	// Clients do not serve one.
	Port int
	// Refresh is how often the automanaged provider polls the members,
	// and the etcd and postgres providers renew and list (DefaultRefresh
	// when 0): with automanaged a member that dies leaves the others'
	// view within about this long.
	Refresh time.Duration
	// TTL is how long an etcd or postgres registration lasts unless its
	// member renews it, and how long an automanaged member whose health
	// polls time out stays in the views (DefaultTTL when 0): a member
	// that stalls this long leaves every view, and finds itself dropped
	// when it runs again. It must be more than Refresh.
	TTL time.Duration
}

// Validate says what is wrong with c, naming the setting.
func (c Config) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("the cluster needs a name")
	}
	switch c.Provider {
	case "", Automanaged, Etcd:
	case Postgres:
		if c.Postgres == "" {
			return fmt.Errorf("cluster %s: the postgres provider needs the members' PostgreSQL database", c.Name)
		}
		if len(c.Seeds) > 0 {
			return fmt.Errorf("cluster %s: the postgres provider takes no seeds (the members register in their PostgreSQL database)", c.Name)
		}
		return c.validateTimes()
	default:
		return fmt.Errorf("cluster provider %q: want %s, %s or %s", c.Provider, Automanaged, Etcd, Postgres)
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
	return c.validateTimes()
}

// validateTimes checks Refresh and TTL.
func (c Config) validateTimes() error {
	if c.Refresh < 0 || c.TTL < 0 {
		return fmt.Errorf("cluster %s: refresh %s and TTL %s must not be negative", c.Name, c.Refresh, c.TTL)
	}
	if c.ttl() <= c.refresh() {
		return fmt.Errorf("cluster %s: the TTL %s must be longer than the refresh %s", c.Name, c.ttl(), c.refresh())
	}
	return nil
}

// provider builds c's protoactor cluster provider.
func (c Config) provider() (actorcluster.ClusterProvider, error) {
	switch c.Provider {
	case Etcd:
		r, err := newEtcdRegistry(c.Seeds, c.Name)
		if err != nil {
			return nil, err
		}
		return &leased{reg: r, ttl: c.ttl(), refresh: c.refresh()}, nil
	case Postgres:
		r, err := newPgRegistry(c.Postgres, c.Name)
		if err != nil {
			return nil, err
		}
		return &leased{reg: r, ttl: c.ttl(), refresh: c.refresh()}, nil
	}
	port := c.Port
	if port == 0 {
		port = DefaultPort
	}
	return &leased{reg: &seedRegistry{view: newSeedView(c), port: port}, ttl: c.ttl(), refresh: c.refresh()}, nil
}

// clientProvider builds the cluster provider of a client of c: for
// automanaged a seedPoller, which never blocks a member for good (see
// seeds.go); for etcd and postgres the members' own, which drops only a
// member whose registration lapsed, and that member rejoins under a new
// id.
func (c Config) clientProvider() (actorcluster.ClusterProvider, error) {
	if c.Provider == Etcd || c.Provider == Postgres {
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

// ttl is how long a registration lasts.
func (c Config) ttl() time.Duration {
	if c.TTL <= 0 {
		return DefaultTTL
	}
	return c.TTL
}

// Cluster is the protoactor cluster configuration of c for a member's
// actor system whose remote is remoteCfg, with kinds (the session kind).
// It validates c and builds its provider.
func (c Config) Cluster(remoteCfg *remote.Config, kinds ...*actorcluster.Kind) (*actorcluster.Config, error) {
	return c.configure(c.provider, remoteCfg, kinds...)
}

// configure validates c and builds its protoactor cluster configuration
// with the provider that provider builds.
func (c Config) configure(provider func() (actorcluster.ClusterProvider, error), remoteCfg *remote.Config, kinds ...*actorcluster.Kind) (*actorcluster.Config, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, err := provider()
	if err != nil {
		return nil, err
	}
	return actorcluster.Configure(c.Name, p, disthash.New(), remoteCfg, actorcluster.WithKinds(kinds...)), nil
}
