// Package lazyregexp compiles a regular expression on its first use rather
// than at start-up: every process that links a package (the hook binary
// among them) pays only for the expressions it uses.
package lazyregexp

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call (and panics
// there, as regexp.MustCompile does, when expr is not valid) and returns the
// same *regexp.Regexp on every call. It is safe for concurrent use.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
