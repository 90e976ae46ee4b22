package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/tack-run/tack/cluster"
)

// clusterFlags are the --cluster flags of a member (tack node) and of a
// front end (tack serve), which joins as a client and serves no
// automanaged endpoint of its own.
type clusterFlags struct {
	cfg   cluster.Config
	seeds string
}

// register adds the flags to fs; name is the --cluster flag's usage.
func (cf *clusterFlags) register(fs *flag.FlagSet, name string, member bool) {
	fs.StringVar(&cf.cfg.Name, "cluster", "", name)
	fs.StringVar(&cf.cfg.Provider, "cluster-provider", cluster.Automanaged, "how members find each other: automanaged (members poll each other over HTTP), etcd, or postgres (members register in the --store database)")
	fs.DurationVar(&cf.cfg.TTL, "cluster-ttl", cluster.DefaultTTL, "how long a member that is not heard of stays in the views: etcd, postgres: its registration's TTL; automanaged: how long one whose health polls time out stays (one that refuses leaves at once)")
	if member {
		fs.StringVar(&cf.seeds, "cluster-seeds", "", "automanaged: HOST:PORT of every member's --cluster-port, this one's included; etcd: the etcd endpoints (comma-separated); postgres: none")
		fs.IntVar(&cf.cfg.Port, "cluster-port", cluster.DefaultPort, "automanaged: the port this member's HTTP endpoint listens on, on every interface (it tells the member's address and kinds)")
		fs.DurationVar(&cf.cfg.Refresh, "cluster-refresh", cluster.DefaultRefresh, "automanaged: how often members poll each other (how soon a dead member leaves the others' view); etcd, postgres: how often a member renews its registration and lists the members")
		return
	}
	fs.StringVar(&cf.seeds, "cluster-seeds", "", "automanaged: HOST:PORT of every member's --cluster-port; etcd: the etcd endpoints (comma-separated); postgres: none")
	fs.DurationVar(&cf.cfg.Refresh, "cluster-refresh", cluster.DefaultRefresh, "automanaged: how often this front end polls the members (how soon a dead member leaves its view); etcd, postgres: how often it lists them")
}

// config is the cluster the parsed flags name (Name empty: none), checked
// against --store; why says what the cluster keeps in PostgreSQL.
func (cf *clusterFlags) config(store, why string) (cluster.Config, error) {
	cl := cf.cfg
	if cf.seeds != "" {
		cl.Seeds = strings.Split(cf.seeds, ",")
	}
	if cl.Name == "" {
		return cl, nil
	}
	if !strings.HasPrefix(store, "postgres://") && !strings.HasPrefix(store, "postgresql://") {
		return cl, fmt.Errorf("--cluster %s needs --store postgres://...: %s (got --store %s)", cl.Name, why, store)
	}
	if cl.Provider == cluster.Postgres {
		cl.Postgres = store
	}
	if err := cl.Validate(); err != nil {
		return cl, fmt.Errorf("--cluster %s: %w (--cluster-provider, --cluster-seeds, --cluster-port, --cluster-refresh, --cluster-ttl)", cl.Name, err)
	}
	return cl, nil
}
