package main

import (
	"fmt"
	"math"
	"slices"
)

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// median returns the median of xs (the mean of the middle two when even).
func median(xs []float64) float64 {
	s := sorted(xs)
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// ratio formats a/b: Tack's figure over a peer's.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "–"
	}
	r := a / b
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	case r >= 0.01:
		return fmt.Sprintf("%.2f", r)
	default:
		return fmt.Sprintf("%.4f", r)
	}
}

// dur formats a duration given in ns.
func dur(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "–"
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.0f ns", ns)
	}
}

func bytesFmt(b float64) string {
	switch {
	case math.IsNaN(b):
		return "–"
	case math.Abs(b) >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case math.Abs(b) >= 1<<10:
		return fmt.Sprintf("%.2f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

func rate(r float64) string {
	switch {
	case math.IsNaN(r):
		return "–"
	case r >= 1e6:
		return fmt.Sprintf("%.2f M/s", r/1e6)
	case r >= 1e4:
		return fmt.Sprintf("%.0f k/s", r/1e3)
	case r >= 1e3:
		return fmt.Sprintf("%.1f k/s", r/1e3)
	default:
		return fmt.Sprintf("%.0f /s", r)
	}
}

// spread formats the min – max of xs with f, and how many there are.
func spread(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "–"
	}
	s := sorted(xs)
	return fmt.Sprintf("%s – %s (n=%d)", f(s[0]), f(s[len(s)-1]), len(s))
}

// medianSpread formats the median of xs, then their min – max and count.
func medianSpread(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "–"
	}
	s := sorted(xs)
	return fmt.Sprintf("%s (%s – %s, n=%d)", f(median(s)), f(s[0]), f(s[len(s)-1]), len(s))
}
