package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// pct returns the p-th percentile of ds (nearest rank, rounding down; 0 for
// no samples).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// medianInt returns the median of xs, leaving out zeros (unknown values);
// 0 when none is known.
func medianInt(xs []int64) int64 {
	var s []int64
	for _, x := range xs {
		if x > 0 {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// msOf returns d in milliseconds, to the microsecond.
func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", msOf(d)) }

// ratio returns a/b rounded to three decimals, 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return round3(float64(a) / float64(b))
}

// round3 rounds v to three decimals.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// mib formats kib (KiB) in MiB; "n/a" for 0 (unknown).
func mib(kib int64) string {
	if kib == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}
