package policy

import "testing"

// The spellings of person-only commands from the field (issue: trust), and
// commands whose words cannot be resolved before they run, reach Person.
func TestPersonCommandsInAnySpelling(t *testing.T) {
	for _, line := range []string{
		"sessionvault accept",
		"sessionvault --vault ~/v accept",
		"sessionvault --vault=/v --project demo accept",
		"sessionvault mode set disabled",
		"sessionvault mode set dis''abled",
		`sessionvault mode set disable\d`,
		`sessionvault mo''de set disabled`,
		`sessionvault mode set "dis"abled`,
		`SV=sessionvault; $SV accept`,
		`sessionvault mode set "$(echo disabled)"`,
		`sessionvault mode set $(echo disabled)`,
		"sed -i 's/x/y/' ../vault/demo/session-current-state.md && sessionvault accept",
		"cd /tmp; /usr/local/bin/sessionvault hooks install",
		"env FOO=1 sessionvault accept",
		"command sessionvault accept",
		"sudo -n sessionvault accept",
		"eval 'sessionvault accept'",
		"echo accept | xargs sessionvault",
		"bash -c 'sessionvault accept'",
		"sh -c \"sessionvault mode set disabled\"",
		"$(which sessionvault) accept",
	} {
		if got := ClassifyBash(line); got.Class != Person {
			t.Errorf("%q: class %s (%s), want person", line, got.Class, got.Why)
		}
	}
}

// Reading commands (from real transcripts) are Read; anything that writes or
// runs code is Write; sessionvault's agent verbs are Way.
func TestBashReadingAndWriting(t *testing.T) {
	for line, want := range map[string]Class{
		"git status":                                  Read,
		"git status --short && git diff HEAD~1":       Read,
		"ls -la":                                      Read,
		"cat README.md | head -50":                    Read,
		"git log --oneline -20":                       Read,
		"find . -name '*.go' -not -path './vendor/*'": Read,
		"grep -rn 'func main' --include=*.go .":       Read,
		"git diff --stat 2>&1":                        Read,
		"wc -l $(git ls-files '*.go')":                Read,
		"git branch -a":                               Read,
		"go version":                                  Read,
		"sed -n '1,40p' main.go":                      Read,
		"echo hi > /dev/null":                         Read,
		"cd internal && ls":                           Read,
		"sessionvault status --json":                  Read,
		"sessionvault update 'did x'":                 Way,
		"sessionvault --vault /v evidence record c-1 --file x.md": Way,
		"git push --force":             Write,
		"rm -rf build":                 Write,
		"git reset --hard HEAD~1":      Write,
		"sed -i 's/a/b/' x.go":         Write,
		"echo x >> notes.md":           Write,
		"cat a > b":                    Write,
		"go test ./...":                Write,
		"make":                         Write,
		"find . -name '*.tmp' -delete": Write,
		"git commit -m x":              Write,
		"git branch -D old":            Write,
		"python3 -c 'print(1)'":        Write,
		"npm install":                  Write,
		"tee out.txt < in.txt":         Write,
		"ls; rm x":                     Write,
		"echo $(rm -rf x)":             Write,
		"if then fi (":                 Write, // does not parse
	} {
		if got := ClassifyBash(line); got.Class != want {
			t.Errorf("%q: class %s (%s), want %s", line, got.Class, got.Why, want)
		}
	}
}

// The files a writing command line names are reported, for the hook to
// check against the vault.
func TestBashPathsWritten(t *testing.T) {
	b := ClassifyBash("sed -i 's/x/y/' ../vault/demo/session-current-state.md && echo done >> notes/log.md")
	want := map[string]bool{"../vault/demo/session-current-state.md": true, "notes/log.md": true}
	for _, p := range b.Paths {
		delete(want, p)
	}
	if len(want) > 0 {
		t.Errorf("paths %v miss %v", b.Paths, want)
	}
}

// A person's verb counts only as the verb: the same word in a message does
// not.
func TestPersonVerbOnlyAsTheVerb(t *testing.T) {
	for line, want := range map[string]bool{
		"sessionvault hooks install --project-dir .": true,
		"sessionvault update accept the offer":       false,
		"sessionvault update 'we accept'":            false,
		"sessionvault mode set coding":               false,
		"echo accept":                                false,
		"echo 'sessionvault accept'":                 false,
	} {
		if got := ClassifyBash(line).Class == Person; got != want {
			t.Errorf("%q: person %v, want %v", line, got, want)
		}
	}
}
