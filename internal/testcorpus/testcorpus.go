// Package testcorpus finds the real corpus the corpus tier of the tests
// runs on: session logs, protocols and memories written by people and
// agents, kept outside the repository (it is not ours to ship). The fast
// tier needs only the repository; a corpus test skips with one line when the
// corpus is not there, unless SESSIONVAULT_CORPUS_REQUIRED is set (CI sets
// it, so the tier never goes silently unrun there).
//
// Imported by tests only.
package testcorpus

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvDir names the corpus folder (the one holding ai-agents/); without it
// the corpus is ../shared/corpus beside the repository (the folder holding
// go.mod).
const EnvDir = "SESSIONVAULT_CORPUS"

// EnvRequired, when set to anything but "" or "0", makes a missing corpus
// a test failure instead of a skip.
const EnvRequired = "SESSIONVAULT_CORPUS_REQUIRED"

// Find returns the corpus folder, or "" when there is none.
func Find() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(filepath.Dir(d), "shared", "corpus")
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return p
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Dir returns the corpus's folder sub (e.g. "ai-agents"), skipping the test
// when the corpus is not there (failing it when EnvRequired is set).
func Dir(t testing.TB, sub string) string {
	t.Helper()
	root := Find()
	if root == "" {
		missing(t, "no corpus: set "+EnvDir+"=DIR (the folder holding "+sub+"/) to run the corpus tier")
		return ""
	}
	p := filepath.Join(root, sub)
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		missing(t, "the corpus at "+root+" has no "+sub+"/ folder")
		return ""
	}
	return p
}

func missing(t testing.TB, why string) {
	t.Helper()
	if r := os.Getenv(EnvRequired); r != "" && r != "0" {
		t.Fatalf("corpus tier: %s (%s is set)", why, EnvRequired)
	}
	t.Skipf("corpus tier skipped: %s", why)
}
