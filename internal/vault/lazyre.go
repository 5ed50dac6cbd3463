package vault

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use, not at start-up: every process
// that links this package (the hook binary among them) pays for the
// expressions it uses only.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
