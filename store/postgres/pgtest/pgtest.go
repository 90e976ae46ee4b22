package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Env names the variable holding the test server's DSN.
const Env = "TACK_TEST_POSTGRES"

// Server returns the DSN of the test server, skipping the test when
// TACK_TEST_POSTGRES is unset — or failing it when CI is true, so CI never
// passes by skipping.
func Server(tb testing.TB) string {
	tb.Helper()
	return FromEnv(tb, Env)
}

// FromEnv returns the value of the test setting name, skipping the test
// when it is unset — or failing it when CI is true. .ci/run sets every
// variable the PostgreSQL tests need.
func FromEnv(tb testing.TB, name string) string {
	tb.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		tb.Fatalf(`%s is not set and CI=true: run .ci/run, or start the servers as it does`, name)
	}
	tb.Skipf(`%s is not set: start the servers as .ci/run does to test against PostgreSQL`, name)
	return ""
}

// DSN creates a schema of its own for tb on the test server and returns a
// DSN whose search_path and application_name are that schema. The schema
// is dropped, with everything in it, when tb ends.
func DSN(tb testing.TB) string {
	tb.Helper()
	return DSNOn(tb, Server(tb))
}

// DSNOn is DSN on the server at base.
func DSNOn(tb testing.TB, base string) string {
	tb.Helper()
	schema := "tack_test_" + randomHex(6)
	exec(tb, base, `CREATE SCHEMA `+schema)
	tb.Cleanup(func() { exec(tb, base, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`) })
	return WithParams(base, map[string]string{"search_path": schema, "application_name": schema})
}

// WithParams returns dsn with the given parameters set, in URL or
// key=value form as dsn is.
func WithParams(dsn string, params map[string]string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			for k, v := range params {
				q.Set(k, v)
			}
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	var b strings.Builder
	b.WriteString(dsn)
	for k, v := range params {
		b.WriteString(" " + k + "='" + strings.ReplaceAll(v, "'", `\'`) + "'")
	}
	return b.String()
}

// Conn opens a connection of its own to the test server (not to a test
// schema), closed when tb ends: for statements a store would not run,
// such as pg_terminate_backend.
func Conn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	conn := connect(tb, Server(tb))
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func connect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(dsn) // accepts pool_* parameters, which pgx.Connect refuses
	if err != nil {
		tb.Fatalf("pgtest: %s: %v", Env, err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		tb.Fatalf("pgtest: connecting to %s: %v", Env, err)
	}
	return conn
}

// exec runs one statement on a connection of its own.
func exec(tb testing.TB, dsn, sql string) {
	tb.Helper()
	conn := connect(tb, dsn)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		tb.Fatalf("pgtest: %s: %v", sql, err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
