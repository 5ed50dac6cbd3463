// Package shellquote quotes a word for the commands sessionvault prints —
// the remedies in its errors, denies and notes — so that a person or an
// agent can paste them into a shell as written.
package shellquote

import "mvdan.cc/sh/v3/syntax"

// Quote returns v as one shell word: unchanged when it needs no quoting,
// else quoted for a POSIX shell (syntax.Quote); a value with control
// characters (a line break), which POSIX quoting cannot carry, is quoted as
// bash and zsh read it ($'…'). A value no shell can carry (a NUL byte) comes
// back single-quoted with the byte left in, which a shell then refuses.
func Quote(v string) string {
	if q, err := syntax.Quote(v, syntax.LangPOSIX); err == nil {
		return q
	}
	if q, err := syntax.Quote(v, syntax.LangBash); err == nil {
		return q
	}
	return "'" + v + "'"
}
