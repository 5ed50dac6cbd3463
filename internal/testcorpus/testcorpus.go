// Package testcorpus finds the real corpus the corpus tier of the tests
// runs on: session logs, protocols and memories written by people and
// agents, kept outside the repository (it is not ours to ship). The tier is
// opt-in: it runs when SESSIONVAULT_CORPUS names the corpus (`make test`
// sets it when ../shared/corpus is beside the repository), so `go test
// ./...` needs only the repository and stays quick; a corpus test skips
// with one line otherwise, unless SESSIONVAULT_CORPUS_REQUIRED is set (CI
// sets it, so the tier never goes silently unrun there).
//
// Imported by tests only.
package testcorpus

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvDir names the corpus folder (the one holding ai-agents/), as an
// absolute path or relative to the folder holding go.mod.
const EnvDir = "SESSIONVAULT_CORPUS"

// EnvRequired, when set to anything but "" or "0", makes a missing corpus
// a test failure instead of a skip.
const EnvRequired = "SESSIONVAULT_CORPUS_REQUIRED"

// Find returns the corpus folder EnvDir names, or "" when it names none.
func Find() string {
	d := os.Getenv(EnvDir)
	if d == "" || filepath.IsAbs(d) {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return d
	}
	for m := wd; ; m = filepath.Dir(m) {
		if _, err := os.Stat(filepath.Join(m, "go.mod")); err == nil {
			return filepath.Join(m, d)
		}
		if filepath.Dir(m) == m {
			return d
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
