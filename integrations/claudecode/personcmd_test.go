package claudecode

import "testing"

// A person's commands are found in any shell command line, and only as the verb.
func TestPersonOnlyRe(t *testing.T) {
	for c, want := range map[string]bool{
		"sessionvault accept":                                    true,
		"sed -i x f && sessionvault accept":                      true,
		"/usr/bin/sessionvault --vault /v --project demo accept": true,
		"sessionvault --vault=/v mode set disabled":              true,
		"sessionvault mode set 'disabled'":                       true,
		"sessionvault hooks install --project-dir .":             true,
		"sessionvault update accept the offer":                   false,
		"sessionvault update 'we accept'":                        false,
		"sessionvault mode set coding":                           false,
		"echo accept":                                            false,
	} {
		if got := personOnlyRe.MatchString(c); got != want {
			t.Errorf("%q: %v, want %v", c, got, want)
		}
	}
}
