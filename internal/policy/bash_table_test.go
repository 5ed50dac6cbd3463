package policy

import (
	"slices"
	"strings"
	"testing"
)

// bashCase is one command line, the class it must get, a part of the reason
// the agent is shown ("" = any), and files that must be among the paths it
// may write.
type bashCase struct {
	line   string
	class  Class
	why    string
	writes []string
}

func checkBash(t *testing.T, cases []bashCase) {
	t.Helper()
	for _, tc := range cases {
		got := ClassifyBash(tc.line)
		if got.Class != tc.class {
			t.Errorf("%q: class %s (%s), want %s", tc.line, got.Class, got.Why, tc.class)
			continue
		}
		if tc.class == Read && got.Why != "" {
			t.Errorf("%q: a reading line with reason %q", tc.line, got.Why)
		}
		if tc.class >= Write && got.Why == "" {
			t.Errorf("%q: class %s without a reason", tc.line, got.Class)
		}
		if !strings.Contains(got.Why, tc.why) {
			t.Errorf("%q: reason %q, want one containing %q", tc.line, got.Why, tc.why)
		}
		for _, p := range tc.writes {
			if !slices.Contains(got.Paths, p) {
				t.Errorf("%q: paths %q miss %q", tc.line, got.Paths, p)
			}
		}
	}
}

// Redirections write the file they name (a name known only at run time is
// reported as "?", for the guard to judge by the working folder); the null
// device and the standard streams are not files. Function definitions and
// coprocesses run code.
func TestBashRedirectionsAndConstructs(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "ls > out.txt", class: Write, why: "a redirection writes out.txt", writes: []string{"out.txt"}},
		{line: "ls >> log/a.md", class: Write, writes: []string{"log/a.md"}},
		{line: "ls &> all.log", class: Write, writes: []string{"all.log"}},
		{line: "ls &>> all.log", class: Write, writes: []string{"all.log"}},
		{line: "ls >| clobber.txt", class: Write, writes: []string{"clobber.txt"}},
		{line: "cat <> rw.txt", class: Write, writes: []string{"rw.txt"}},
		{line: "ls 2> err.txt", class: Write, writes: []string{"err.txt"}},
		{line: `ls > "$OUT"`, class: Write, why: "named at run time", writes: []string{"?"}},
		{line: "ls > $(mktemp)", class: Write, writes: []string{"?"}},
		{line: `echo x > "with space.md"`, class: Write, writes: []string{"with space.md"}},
		{line: `echo x > "a\"b\$c"`, class: Write, writes: []string{`a"b$c`}},
		{line: `echo x > a\ b`, class: Write, writes: []string{"a b"}},
		{line: "ls 2>/dev/null", class: Read},
		{line: "ls > /dev/stderr 2>&1", class: Read},
		{line: "ls >&2", class: Read},
		{line: "git diff --output=../vault/demo/session-current-state.md", class: Write},
		{line: "git log -p --output x.txt", class: Write},
		{line: "git grep -O foo", class: Write},
		{line: "git -c core.fsmonitor='touch x' status", class: Write},
		{line: "git -c diff.external=./x.sh diff", class: Write},
		{line: "git -c color.ui=false log --oneline", class: Read},
		{line: "go env -u GOFLAGS", class: Write},
		{line: "go env GOPATH", class: Read},
		{line: "ls 2>&-", class: Read},
		{line: "echo x >&../vault/demo/session-current-state.md", class: Write, writes: []string{"../vault/demo/session-current-state.md"}},
		{line: "ls >& out.txt", class: Write, writes: []string{"out.txt"}},
		{line: `ls >&"$OUT"`, class: Write, writes: []string{"?"}},
		{line: "ls > /dev/stdout", class: Read},
		{line: "cat < in.txt", class: Read},
		{line: "cat <<'EOF'\nhello\nEOF", class: Read},
		{line: "f() { ls; }", class: Write, why: "shell function"},
		{line: "coproc ls", class: Write, why: "coprocess"},
		{line: "X=1", class: Read},
		{line: "X=1 Y=2; ls", class: Read},
		{line: "for f in *.go; do wc -l $f; done", class: Read},
		{line: "if test -f go.mod; then cat go.mod; fi", class: Read},
		{line: "diff <(ls a) <(ls b)", class: Read},
		{line: "diff <(ls a) <(rm b)", class: Write, why: "`rm`"},
		{line: "ls && (cd x; touch y)", class: Write, why: "`touch`", writes: []string{"y"}},
		{line: "echo 'unterminated", class: Write, why: "does not parse"},
	})
}

// Wrappers (env, sudo, timeout, nice, command, exec, xargs, ...) are seen
// through to the command they run; eval and xargs run what is known only at
// run time.
func TestBashWrappers(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "env", class: Read},
		{line: "env FOO=1 BAR=2 git status", class: Read},
		{line: "env -i FOO=1 make", class: Write, why: "`make`"},
		{line: "timeout 5 ls", class: Read},
		{line: "timeout 2.5s go test ./...", class: Write, why: "`go test`"},
		{line: "timeout 1m sessionvault accept", class: Person, why: "person's command"},
		{line: "nohup make &", class: Write, why: "`make`"},
		{line: "time ls", class: Read},
		{line: "nice rm x", class: Write, why: "`rm`", writes: []string{"x"}},
		{line: "sudo ls", class: Read},
		{line: "doas sessionvault hooks install", class: Person},
		{line: "exec sessionvault mode set disabled", class: Person},
		{line: "builtin cd /", class: Read},
		{line: "command ls", class: Read},
		{line: "eval ls", class: Person, why: "`eval`"},
		{line: "builtin eval ls", class: Person, why: "`eval`"},
		{line: "ls | xargs", class: Write, why: "`xargs` runs commands"},
		{line: "ls | xargs rm", class: Write, why: "`xargs` runs `rm`"},
		{line: "ls | xargs -0 wc -l", class: Write, why: "`xargs` runs `wc`"},
		{line: `ls | xargs "$CMD"`, class: Person, why: "named at run time"},
		{line: "echo update | xargs sessionvault", class: Person, why: "sessionvault arguments known only at run time"},
		{line: "echo x | xargs /usr/bin/sessionvault-hook", class: Person},
		{line: "$EDITOR notes.md", class: Person, why: "only known at run time ($EDITOR)"},
		{line: "${TOOLS}/run", class: Person},
	})
}

// A shell's -c line is classified as a command line of its own (a line
// known only at run time could be anything); a shell run on a script runs
// code.
func TestBashNestedShells(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "bash -c 'git status && ls'", class: Read},
		{line: "bash -lc 'git log -1'", class: Read},
		{line: "sh -ec 'rm -rf build'", class: Write, why: "`rm`", writes: []string{"build"}},
		{line: "zsh -c 'echo hi > x.txt'", class: Write, writes: []string{"x.txt"}},
		{line: "bash -c 'sessionvault update x'", class: Way},
		{line: "dash -c \"sessionvault mode set disabled\"", class: Person},
		{line: `bash -c "$LINE"`, class: Person, why: "`bash -c` runs a command line known only at run time"},
		{line: "sh -c", class: Person},
		{line: "ksh script.sh", class: Write, why: "`ksh` runs a script", writes: []string{"script.sh"}},
		{line: "bash --norc build.sh", class: Write, why: "runs a script"},
		{line: "/bin/bash -c ls", class: Read},
	})
}

// The reading commands stay Read with reading arguments and become Write
// with the arguments that make them write or run code: sed -i or a sed
// script that writes, find -exec/-delete, awk system() or output, go build
// and test, go env -w, npm and cargo builds.
func TestBashReadersThatCanWrite(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "sed -n '1,20p' main.go", class: Read},
		{line: "sed -E 's/a+/b/' x", class: Read},
		{line: "sed -i.bak 's/a/b/' x.go", class: Write, why: "`sed -i`", writes: []string{"x.go"}},
		{line: "sed --in-place=.orig 's/a/b/' x.go", class: Write, why: "`sed -i`"},
		{line: "sed --in-place 's/a/b/' x.go", class: Write},
		{line: "sed -ni 's/a/b/p' x.go", class: Write},
		{line: "sed -e 's/a/b/' -i x.go", class: Write},
		{line: "sed 's/a/b/w out.txt' x.go", class: Write, why: "a sed script that writes"},
		{line: "sed '1e date' x", class: Write, why: "runs commands"},
		{line: `sed "$SCRIPT" x`, class: Write},
		{line: "find . -name '*.go'", class: Read},
		{line: "find . -exec rm {} ;", class: Write, why: "`find -exec`"},
		{line: "find . -execdir touch x ;", class: Write, why: "`find -execdir`"},
		{line: "find . -ok rm {} ;", class: Write},
		{line: "find . -fprint list.txt", class: Write, why: "`find -fprint`"},
		{line: "find . -fls list.txt", class: Write},
		{line: "awk '{print $1}' a.txt", class: Read},
		{line: `awk 'BEGIN{system("rm -rf x")}'`, class: Write, why: "awk program"},
		{line: `awk '{print > "out"}' a.txt`, class: Write},
		{line: `awk '{print | "sh"}' a.txt`, class: Write},
		{line: "go version", class: Read},
		{line: "go env GOPATH", class: Read},
		{line: "go list -m all", class: Read},
		{line: "go doc fmt.Println", class: Read},
		{line: "go help test", class: Read},
		{line: "go env -w GOFLAGS=-mod=mod", class: Write, why: "`go env -w`"},
		{line: "go build ./...", class: Write, why: "`go build` builds or runs code"},
		{line: "go run .", class: Write, why: "`go run`"},
		{line: "go", class: Write, why: "builds or runs code"},
		{line: "npm ls", class: Read},
		{line: "npm view react version", class: Read},
		{line: "npm --version", class: Read},
		{line: "cargo tree", class: Read},
		{line: "cargo metadata", class: Read},
		{line: "cargo build --release", class: Write, why: "`cargo` builds, installs or runs code"},
		{line: "npm run build", class: Write, why: "`npm`"},
		{line: "npm", class: Write},
		{line: "printenv HOME", class: Read},
		{line: "cat go.mod | sort | uniq -c | head", class: Read},
		{line: "python3 x.py", class: Write, why: "`python3` is not a reading command", writes: []string{"x.py"}},
		{line: "/usr/bin/touch a", class: Write, why: "`touch`", writes: []string{"a"}},
		{line: "cp a.md b.md", class: Write, writes: []string{"b.md"}},
		{line: "tee -a log.md", class: Write, writes: []string{"log.md"}},
	})
}

// git reads with its reading subcommands (after global options), lists
// branches, tags, remotes and stashes, and reads its configuration; every
// other subcommand, or a listing command given a name, changes the
// repository, and the reason names the subcommand.
func TestBashGit(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "git -C sub status", class: Read},
		{line: "git --git-dir .git --work-tree . log -1", class: Read},
		{line: "git -c color.ui=never diff", class: Read},
		{line: "git --no-pager log --oneline", class: Read},
		{line: "git rev-parse HEAD", class: Read},
		{line: "git cat-file -p HEAD", class: Read},
		{line: "git branch", class: Read},
		{line: "git branch -vv --sort=-committerdate", class: Read},
		{line: "git branch --contains=HEAD --merged=main", class: Read},
		{line: "git tag -l", class: Read},
		{line: "git tag", class: Read},
		{line: "git remote -v", class: Read},
		{line: "git stash list", class: Read},
		{line: "git stash list --stat", class: Read},
		{line: "git config --get user.email", class: Read},
		{line: "git config --list", class: Read},
		{line: "git config -l", class: Read},
		{line: "git config --get-all remote.origin.fetch", class: Read},
		{line: "git config user.email a@b", class: Write, why: "`git config` may change the configuration"},
		{line: "git config", class: Write},
		{line: "git tag v1.0", class: Write, why: "`git tag v1.0` changes the repository"},
		{line: "git remote add up https://x", class: Write, why: "`git remote add`"},
		{line: "git branch -D old", class: Write, why: "`git branch -D`"},
		{line: "git stash", class: Write, why: "`git stash`"},
		{line: "git stash pop", class: Write},
		{line: "git commit -m x", class: Write, why: "`git commit` changes the repository or runs code"},
		{line: "git -C ../other push", class: Write, why: "`git push`"},
		{line: "git clean -fdx", class: Write},
		{line: "git", class: Write},
	})
}

// The GitHub CLI reads when it views or lists; gh api reads only with no
// method and no fields; anything else may change things on GitHub.
func TestBashGitHubCLI(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "gh pr view 42 --json title", class: Read},
		{line: "gh issue list", class: Read},
		{line: "gh run view 123", class: Read},
		{line: "gh repo view", class: Read},
		{line: "gh release list", class: Read},
		{line: "gh workflow list", class: Read},
		{line: "gh pr status", class: Read},
		{line: "gh api repos/o/r/pulls", class: Read},
		{line: "gh api -X POST repos/o/r/issues", class: Write, why: "`gh api` with a method or fields"},
		{line: "gh api -XDELETE repos/o/r", class: Write},
		{line: "gh api --method PATCH repos/o/r", class: Write},
		{line: "gh api --method=PUT repos/o/r", class: Write},
		{line: "gh api repos/o/r/issues -f title=x", class: Write},
		{line: "gh api repos/o/r/issues -F n=1", class: Write},
		{line: "gh api repos/o/r/issues --field n=1", class: Write},
		{line: "gh api repos/o/r/issues --raw-field n=1", class: Write},
		{line: "gh api repos/o/r/issues --input body.json", class: Write},
		{line: "gh api graphql", class: Write, why: "`gh api graphql` may run a mutation"},
		{line: "gh pr merge 42", class: Write, why: "`gh pr merge` may change things on GitHub"},
		{line: "gh pr", class: Write, why: "`gh pr`"},
		{line: "gh", class: Write},
	})
}

// sessionvault's own commands: reading verbs are Read, the agent's verbs
// are the way out (Way), and a person's verb — in any spelling the shell
// resolves, after global options, or with arguments only known at run time
// — is Person. Backslashes inside double quotes stay as the shell keeps
// them.
func TestBashSessionvaultVerbs(t *testing.T) {
	checkBash(t, []bashCase{
		{line: "sessionvault", class: Read},
		{line: "sessionvault --json", class: Read},
		{line: "sessionvault check", class: Read},
		{line: "sessionvault blocked-reason Edit", class: Read},
		{line: "sessionvault --project demo gate start", class: Read},
		{line: "sessionvault doctor", class: Read},
		{line: "sessionvault start --objective x", class: Way},
		{line: "sessionvault --op-id 1234 update x", class: Way},
		{line: "sessionvault mode set coding", class: Way},
		{line: "sessionvault mode set analysis", class: Way},
		{line: "sessionvault mode set DISABLED", class: Person, why: "`sessionvault mode set disabled`"},
		{line: "sessionvault --json mode set --project demo disabled", class: Person},
		{line: "sessionvault --vault=/v hooks install", class: Person, why: "`sessionvault hooks`"},
		{line: "sessionvault-hook accept", class: Person},
		{line: "./bin/sessionvault accept", class: Person},
		{line: "sessionvault --vault \"$V\" update x", class: Person, why: "only known at run time"},
		{line: "sessionvault --project $P status", class: Person},
		{line: "sessionvault update \"$MSG\"", class: Person, why: "could be a person's command"},
		{line: "sessionvault mode set dis\\\nabled", class: Person},
		{line: "sessionvault mode set \"dis\\\nabled\"", class: Person},
		{line: `sessionvault mode set "disabl\ed"`, class: Way}, // the shell passes disabl\ed
		{line: "sessionvault --vault", class: Read},
		{line: "sessionvault update x > notes.md", class: Write, writes: []string{"notes.md"}},
		{line: "sessionvault update x && rm y", class: Write},
		{line: "sessionvault update x && sessionvault accept", class: Person},
		{line: "git status && sessionvault update x", class: Way},
	})
}
