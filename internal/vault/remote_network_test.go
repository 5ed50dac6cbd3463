package vault

import (
	"errors"
	"testing"
)

// What git writes when a remote cannot be reached is a network failure; a
// remote that answered (refused credentials, no such repository, a
// certificate git does not trust) is not.
func TestUnreachableReadsGitsMessage(t *testing.T) {
	for msg, want := range map[string]bool{
		"fatal: unable to access 'http://nonexistent.invalid/x.git/': Could not resolve host: nonexistent.invalid":                  true,
		"fatal: unable to access 'http://127.0.0.1:9/x.git/': Failed to connect to 127.0.0.1 port 9 after 0 ms: Connection refused": true,
		"ssh: Could not resolve hostname gitlab.invalid: Name or service not known\nfatal: Could not read from remote repository.":  true,
		"ssh: connect to host example.com port 22: Connection timed out\nfatal: Could not read from remote repository.":             true,
		"ssh: connect to host example.com port 22: Network is unreachable":                                                          true,
		"fatal: unable to access 'https://example.com/x.git/': The requested URL returned error: 403":                               false,
		"fatal: unable to access 'https://example.com/x.git/': SSL certificate problem: self-signed certificate":                    false,
		"fatal: repository 'https://example.com/x.git/' not found":                                                                  false,
		"fatal: '/nonexistent/x.git' does not appear to be a git repository":                                                        false,
		"fatal: Authentication failed for 'https://example.com/x.git/'":                                                             false,
	} {
		if got := unreachable(errors.New("git fetch --quiet origin main: " + msg + ": exit status 128")); got != want {
			t.Errorf("unreachable(%q) = %v, want %v", msg, got, want)
		}
	}
}
