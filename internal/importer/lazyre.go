package importer

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on first use, so that the
// importer's many patterns cost nothing at process start (the CLI starts for
// every agent command; only `import agents` needs them).
type lazyRegexp struct {
	once sync.Once
	src  string
	re   *regexp.Regexp
}

func lazy(src string) *lazyRegexp { return &lazyRegexp{src: src} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}
func (l *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
func (l *lazyRegexp) FindString(s string) string           { return l.get().FindString(s) }
func (l *lazyRegexp) FindStringIndex(s string) []int       { return l.get().FindStringIndex(s) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
func (l *lazyRegexp) Match(b []byte) bool                  { return l.get().Match(b) }
func (l *lazyRegexp) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRegexp) ReplaceAllString(s, repl string) string {
	return l.get().ReplaceAllString(s, repl)
}
