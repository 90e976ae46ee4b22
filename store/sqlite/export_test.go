package sqlite

import "testing"

// Exec runs a statement on the write connection (pragmas for fault tests).
func Exec(tb testing.TB, s *Store, query string, args ...any) {
	tb.Helper()
	if _, err := s.wdb.ExecContext(tb.Context(), query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// QueryInt runs a query returning one integer on the write connection.
func QueryInt(tb testing.TB, s *Store, query string) int {
	tb.Helper()
	var n int
	if err := s.wdb.QueryRowContext(tb.Context(), query).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// QueryString runs a query returning one string on the write connection.
func QueryString(tb testing.TB, s *Store, query string) string {
	tb.Helper()
	var v string
	if err := s.wdb.QueryRowContext(tb.Context(), query).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return v
}
