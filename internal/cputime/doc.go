// Package cputime tells the CPU time the process has used, for the
// benchmarks that report CPU per operation (a turn, a request): every
// thread, garbage collection included, user and system.
package cputime
