package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
)

func msg(s string) []*eventsv1.Message { return []*eventsv1.Message{{Role: "user", Content: s}} }

// terminate kills, from a connection of its own, the backends matching
// the pg_stat_activity condition and waits until they are gone.
func terminate(t *testing.T, query string, args ...any) int {
	t.Helper()
	rows, _ := pgtest.Conn(t).Query(context.Background(), `SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE `+query, args...)
	killed, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	if err != nil {
		t.Fatal(err)
	}
	return len(killed)
}

// A connection that drops inside Apply's transaction — after the messages
// and the session row were written, before COMMIT — fails that Apply and
// leaves nothing of it; the next call works on a fresh connection.
func TestDroppedConnectionMidApply(t *testing.T) {
	st := openAt(t, pgtest.DSN(t))
	ctx := t.Context()
	if err := st.Create(ctx, "s1", store.Config{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, "s1", &store.Batch{Messages: msg("kept"), State: "idle"}); err != nil {
		t.Fatal(err)
	}
	postgres.SetBeforeCommit(st, func(ctx context.Context, tx pgx.Tx) error {
		postgres.SetBeforeCommit(st, nil)
		if n := terminate(t, `pid = $1`, tx.Conn().PgConn().PID()); n != 1 {
			t.Errorf("terminated %d backends", n)
		}
		return nil
	})
	batch := &store.Batch{From: 1, Messages: append(msg("lost"), msg("lost too")...), State: "running",
		Volatile: &store.Volatile{PromptQueue: []string{"q"}}}
	err := st.Apply(ctx, "s1", batch)
	if err == nil || errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Apply over a dropped connection: %v, want a connection fault", err)
	}
	t.Logf("dropped connection: %v", err)
	snap, err := st.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Messages) != 1 || snap.State != "idle" || len(snap.Volatile.PromptQueue) != 0 {
		t.Fatalf("after the dropped commit: %+v", snap)
	}
	if err := st.Apply(ctx, "s1", batch); err != nil {
		t.Fatalf("the next Apply: %v", err)
	}
	if snap, _ := st.Load(ctx, "s1"); len(snap.Messages) != 3 || snap.State != "running" {
		t.Fatalf("after the retry: %+v", snap)
	}
}

// A node stalled inside a write's transaction — its process stopped after
// it locked the session's row, before COMMIT — does not keep the session
// from the node that takes the lease once it expired: the server ends the
// stalled transaction after StallTimeout (a DSN parameter here, to keep
// the test short), which releases the row, and the stalled write, fenced
// by a lease it no longer holds, never lands. Before StallTimeout, the
// second node's Acquire waited for as long as the first stayed stopped.
func TestStalledTransactionLetsGo(t *testing.T) {
	dsn := pgtest.WithParams(pgtest.DSN(t), map[string]string{"idle_in_transaction_session_timeout": "300"})
	a, b := openAt(t, dsn), openAt(t, dsn)
	ctx := t.Context()
	if err := a.Create(ctx, "s1", store.Config{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Acquire(ctx, "s1", "a", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	stalled, resume := make(chan struct{}), make(chan struct{})
	postgres.SetBeforeCommit(a, func(context.Context, pgx.Tx) error {
		close(stalled)
		<-resume
		return nil
	})
	applied := make(chan error, 1)
	go func() { applied <- a.Apply(ctx, "s1", &store.Batch{Owner: "a", Messages: msg("stalled")}) }()
	<-stalled
	resumed := sync.OnceFunc(func() { close(resume) })
	defer resumed() // a failing test still lets a's Apply end, and a close
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		err := b.Acquire(actx, "s1", "b", time.Minute)
		if err == nil {
			break
		}
		var owned *store.OwnedError
		if !errors.As(err, &owned) {
			t.Fatalf("Acquire while a stalls in its transaction: %v", err)
		}
		time.Sleep(time.Until(owned.Expires)) // a's lease, not yet expired
	}
	resumed()
	if err := <-applied; err == nil {
		t.Fatal("the stalled write landed after b took the lease")
	}
	if snap, err := b.Load(ctx, "s1"); err != nil || len(snap.Messages) != 0 {
		t.Fatalf("after the stalled write: %+v %v", snap, err)
	}
}

// Open sets StallTimeout on its connections unless the DSN sets it.
func TestStallTimeoutIsSet(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, c := range []struct{ dsn, want string }{
		{dsn, postgres.StallTimeout.String()},
		{pgtest.WithParams(dsn, map[string]string{"idle_in_transaction_session_timeout": "0"}), "0"},
	} {
		var got string
		if err := postgres.Pool(openAt(t, c.dsn)).QueryRow(t.Context(), `SHOW idle_in_transaction_session_timeout`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("idle_in_transaction_session_timeout %q, want %q", got, c.want)
		}
	}
}

// Every connection of the pool killed between calls (a server restart, a
// failover): the following calls reconnect and succeed.
func TestReconnectAfterAllConnectionsDie(t *testing.T) {
	dsn := pgtest.DSN(t)
	st := openAt(t, dsn)
	ctx := t.Context()
	if err := st.Create(ctx, "s1", store.Config{}); err != nil {
		t.Fatal(err)
	}
	// Fill the pool with idle connections.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { st.Get(ctx, "s1") })
	}
	wg.Wait()
	app := postgres.Pool(st).Config().ConnConfig.RuntimeParams["application_name"]
	if n := terminate(t, `application_name = $1`, app); n == 0 {
		t.Fatal("no connection to kill")
	}
	steps := []struct {
		name string
		call func() error
	}{
		{"Get", func() error { _, err := st.Get(ctx, "s1"); return err }},
		{"Apply", func() error { return st.Apply(ctx, "s1", &store.Batch{Messages: msg("after")}) }},
		{"List", func() error { _, err := st.List(ctx, store.Page{}); return err }},
		{"Messages", func() error { _, err := st.Messages(ctx, "s1", 0, 0); return err }},
		{"Acquire", func() error { return st.Acquire(ctx, "s1", "a", time.Minute) }},
	}
	for _, s := range steps {
		if err := s.call(); err != nil {
			t.Fatalf("%s after the connections died: %v", s.name, err)
		}
	}
}

// Opens racing on a fresh schema: the advisory lock lets one migrate and
// the others find the schema done.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 8
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(context.Background(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var versions int
	if err := postgres.Pool(stores[0]).QueryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if want := migrationFiles(t); versions != want {
		t.Fatalf("%d migrations recorded, want %d", versions, want)
	}
}

// migrationFiles counts the embedded migrations: each is recorded once.
func migrationFiles(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	return len(files)
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	st := openAt(t, dsn)
	if _, err := postgres.Pool(st).Exec(t.Context(), `INSERT INTO schema_migrations VALUES (999, 'future', now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), dsn); err == nil {
		t.Fatal("Open of a newer schema succeeded")
	}
}

// Two nodes (two stores, two pools) race for the same session: one wins,
// the other sees it named; fenced writes of the loser fail.
func TestTwoNodesOneOwner(t *testing.T) {
	dsn := pgtest.DSN(t)
	nodes := []*postgres.Store{openAt(t, dsn), openAt(t, dsn)}
	ctx := t.Context()
	if err := nodes[0].Create(ctx, "s1", store.Config{}); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, st := range nodes {
		wg.Go(func() { errs[i] = st.Acquire(ctx, "s1", fmt.Sprintf("node-%d", i), time.Minute) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner < 0:
			winner = i
		case errors.Is(err, store.ErrOwned):
		default:
			t.Fatalf("node-%d: %v (errors %v)", i, err, errs)
		}
	}
	if winner < 0 {
		t.Fatalf("nobody won: %v", errs)
	}
	loser := 1 - winner
	err := nodes[loser].Apply(ctx, "s1", &store.Batch{Owner: fmt.Sprintf("node-%d", loser), Messages: msg("x")})
	var oe *store.OwnedError
	if !errors.As(err, &oe) || oe.Owner != fmt.Sprintf("node-%d", winner) {
		t.Fatalf("loser's fenced Apply: %v", err)
	}
}

// safeErr is an error pgconn.SafeToRetry accepts.
type safeErr struct{}

func (safeErr) Error() string     { return "connection refused before sending" }
func (safeErr) SafeToRetry() bool { return true }

func TestRetry(t *testing.T) {
	st := openAt(t, pgtest.DSN(t))
	var waits []time.Duration
	postgres.SetWait(st, func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	})
	serverErr := &pgconn.PgError{Code: "23505", Message: "duplicate key"}
	tests := []struct {
		name      string
		retryable func(error) bool
		fails     int
		err       error
		wantCalls int
		wantErr   bool
	}{
		{"success", postgres.ConnectionError, 0, nil, 1, false},
		{"recovers", postgres.ConnectionError, 3, safeErr{}, 4, false},
		{"gives up after 6 tries", postgres.ConnectionError, 100, safeErr{}, 6, true},
		{"a sent request is not retried", postgres.ConnectionError, 1, errors.New("read: connection reset"), 1, true},
		{"reads retry a reset", postgres.ReadError, 1, errors.New("read: connection reset"), 2, false},
		{"server errors are final", postgres.ReadError, 1, serverErr, 1, true},
		{"a server shutdown is retried", postgres.ReadError, 1, &pgconn.PgError{Code: "57P01"}, 2, false},
		{"a connection exception is retried", postgres.ReadError, 2, &pgconn.PgError{Code: "08006"}, 3, false},
		{"no rows is final", postgres.ReadError, 1, pgx.ErrNoRows, 1, true},
		{"store outcomes are final", postgres.ReadError, 1, store.ErrNotFound, 1, true},
		{"a cancelled context is final", postgres.ReadError, 1, context.Canceled, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			waits = nil
			calls := 0
			err := postgres.Retry(st, t.Context(), tc.retryable, func() error {
				calls++
				if calls <= tc.fails {
					return tc.err
				}
				return nil
			})
			if calls != tc.wantCalls || (err != nil) != tc.wantErr {
				t.Fatalf("calls %d err %v; want %d calls, error %v", calls, err, tc.wantCalls, tc.wantErr)
			}
			for i, d := range waits {
				if want := min(25*time.Millisecond<<i, time.Second); d != want {
					t.Fatalf("wait %d = %v, want %v", i, d, want)
				}
			}
		})
	}
}

func TestOpenBadDSN(t *testing.T) {
	_, err := postgres.Open(t.Context(), "postgres://%zz")
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Open(bad DSN) = %v, want ErrInvalid", err)
	}
}
