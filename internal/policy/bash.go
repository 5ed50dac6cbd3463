package policy

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash is what a Bash command line does, found by parsing it with a POSIX
// shell parser (mvdan.cc/sh/v3/syntax), never by matching patterns over it.
type Bash struct {
	// Class: Read when every command is a known reading command without a
	// redirection to a file; Way when it is only sessionvault's own (agent)
	// commands, possibly with reading ones; Person when it may reach a
	// person's command (found in any spelling the parser resolves, or a
	// command or sessionvault argument that cannot be resolved statically);
	// Write otherwise (writes files or runs code), including a line that does
	// not parse.
	Class Class
	// Why explains a Person or Write class in a few words, e.g.
	// "`rm` is not a reading command" or "a redirection writes out.txt".
	Why string
	// Paths are the words that name files the command line may write or
	// change (redirection targets and the arguments of writing commands),
	// as written, for the caller to resolve against the working folder.
	Paths []string
}

// readers are commands that only read (with the flags checked in
// readerFlags), by their base name.
var readers = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "ag": true, "echo": true, "printf": true, "pwd": true, "which": true, "whoami": true, "date": true,
	"file": true, "stat": true, "du": true, "df": true, "tree": true, "sort": true, "uniq": true, "cut": true,
	"tr": true, "diff": true, "cmp": true, "jq": true, "realpath": true, "readlink": true, "dirname": true,
	"basename": true, "true": true, "false": true, "test": true, "[": true, "less": true, "more": true,
	"nl": true, "od": true, "hexdump": true, "xxd": true, "md5sum": true, "sha256sum": true, "sha1sum": true,
	"uname": true, "id": true, "hostname": true, "type": true, "command": false, "column": true, "comm": true,
	"sed": true, "find": true, "git": true, "go": true, "env": true, "printenv": true, "ps": true, "sleep": true,
	"awk": true, "cd": true, "tac": true, "rev": true, "fold": true, "expand": true, "paste": true, "join": true,
	"seq": true, "npm": true, "cargo": true, "gh": true,
}

// shells run the command line given with -c.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// gitReading are the git subcommands that only read.
var gitReading = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "blame": true,
	"describe": true, "shortlog": true, "grep": true, "ls-tree": true, "cat-file": true, "rev-list": true,
	"merge-base": true, "reflog": true, "whatchanged": true, "name-rev": true, "show-ref": true, "for-each-ref": true,
	"version": true, "help": true, "cherry": true, "ls-remote": true, "count-objects": true, "check-ignore": true, "var": true,
}

// personVerbs are the sessionvault verbs only a person may run; "mode set
// disabled" is checked apart.
var personVerbs = map[string]bool{"accept": true, "hooks": true}

// ClassifyBash parses a Bash command line and says what it does.
func ClassifyBash(line string) Bash {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return Bash{Class: Write, Why: "the command line does not parse (" + err.Error() + ")"}
	}
	out := Bash{Class: Read}
	raise := func(c Class, why string) {
		if c > out.Class {
			out.Class, out.Why = c, why
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			op := n.Op
			if op == syntax.DplOut {
				// ">&word" duplicates a descriptor ("2>&1", ">&-"), but with a
				// word that is no descriptor it sends both outputs to that
				// file, as "&>word" does.
				if w, ok := resolve(n.Word); !ok || (w != "-" && strings.Trim(w, "0123456789") != "") {
					op = syntax.RdrAll
				}
			}
			switch op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut, syntax.ClbOut:
				target, ok := resolve(n.Word)
				if !ok {
					raise(Write, "a redirection writes to a file named at run time")
					out.Paths = append(out.Paths, "?")
				} else if target != "/dev/null" && target != "/dev/stdout" && target != "/dev/stderr" {
					raise(Write, "a redirection writes "+target)
					out.Paths = append(out.Paths, target)
				}
			}
		case *syntax.CallExpr:
			c, why, paths := classifyCall(n)
			raise(c, why)
			out.Paths = append(out.Paths, paths...)
		case *syntax.FuncDecl:
			raise(Write, "it defines a shell function")
		case *syntax.CoprocClause:
			raise(Write, "it starts a coprocess")
		}
		return true
	})
	return out
}

// wrappers run the command given as their arguments.
var wrappers = map[string]bool{"env": true, "command": true, "exec": true, "nohup": true, "time": true,
	"nice": true, "sudo": true, "doas": true, "timeout": true, "builtin": true, "eval": true, "xargs": true}

// classifyCall classifies one simple command (a CallExpr): the command a
// wrapper runs (env, sudo, xargs, ...), a shell's -c line, sessionvault's
// own verbs, and the reading commands with the arguments that make them
// write (readerClass).
func classifyCall(c *syntax.CallExpr) (Class, string, []string) {
	if len(c.Args) == 0 {
		return Read, "", nil // assignments only
	}
	words := make([]string, len(c.Args))
	known := make([]bool, len(c.Args))
	for i, w := range c.Args {
		words[i], known[i] = resolve(w)
	}
	i, class, why, decided := unwrap(words, known)
	if decided {
		return class, why, nil
	}
	if i >= len(words) {
		return Read, "", nil
	}
	if !known[i] {
		return Person, "the command's name is only known at run time (" + printWord(c.Args[i]) + "), so it could be a person's command", nil
	}
	name := filepath.Base(words[i])
	args, argKnown := words[i+1:], known[i+1:]
	if isSessionvault(words[i]) {
		return classifySessionvault(args, argKnown)
	}
	if shells[name] {
		return shellClass(name, args, argKnown)
	}
	if !readers[name] {
		return Write, "`" + name + "` is not a reading command", args
	}
	return readerClass(name, args, argKnown)
}

// unwrap skips the wrappers (env, command, sudo, timeout, ...) at the start
// of words, with their options, and returns the index of the command they
// run. decided is set when the wrapper itself decides the class: eval, and
// xargs (whose command's arguments are known only at run time).
func unwrap(words []string, known []bool) (i int, class Class, why string, decided bool) {
	for i < len(words) && known[i] && wrappers[filepath.Base(words[i])] {
		name := filepath.Base(words[i])
		if name == "eval" {
			return i, Person, "`eval` runs a command line built at run time", true
		}
		i++
		for i < len(words) && known[i] && (strings.HasPrefix(words[i], "-") || (name == "env" && strings.Contains(words[i], "=")) || (name == "timeout" && isNumberish(words[i]))) {
			i++
		}
		if name == "xargs" {
			switch {
			case i >= len(words):
				return i, Write, "`xargs` runs commands", true
			case !known[i]:
				return i, Person, "`xargs` runs a command named at run time", true
			case isSessionvault(words[i]):
				return i, Person, "`xargs` gives sessionvault arguments known only at run time", true
			}
			return i, Write, "`xargs` runs `" + words[i] + "`", true
		}
	}
	return i, Read, "", false
}

// shellClass classifies a shell (sh, bash, ...) run with args: the line it
// runs with -c, classified as a command line of its own, or a script.
func shellClass(name string, args []string, argKnown []bool) (Class, string, []string) {
	for k, a := range args {
		if a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "c")) {
			if k+1 >= len(args) || !argKnown[k+1] {
				return Person, "`" + name + " -c` runs a command line known only at run time", nil
			}
			inner := ClassifyBash(args[k+1])
			return inner.Class, inner.Why, inner.Paths
		}
	}
	return Write, "`" + name + "` runs a script", args
}

// readerClass classifies a reading command run with args: Read, unless an
// argument makes it write or run something (sed -i, find -exec, git commit,
// go build, ...).
func readerClass(name string, args []string, argKnown []bool) (Class, string, []string) {
	switch name {
	case "sed":
		for k, a := range args {
			if !argKnown[k] || a == "-i" || strings.HasPrefix(a, "-i") || a == "--in-place" || strings.HasPrefix(a, "--in-place=") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i")) {
				return Write, "`sed -i` edits files in place", args
			}
			if strings.Contains(a, "w ") || strings.Contains(a, "e ") && strings.HasPrefix(a, "1e") {
				return Write, "a sed script that writes files or runs commands", args
			}
		}
	case "find":
		for _, a := range args {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fprint0", "-fls":
				return Write, "`find " + a + "` runs or writes", args
			}
		}
	case "awk":
		for _, a := range args {
			if strings.Contains(a, "system") || strings.Contains(a, ">") || strings.Contains(a, "|") {
				return Write, "an awk program that runs commands or writes files", args
			}
		}
	case "git":
		return gitClass(args)
	case "go":
		if len(args) == 0 || !map[string]bool{"version": true, "env": true, "list": true, "doc": true, "help": true}[args[0]] {
			return Write, "`go " + strings.Join(args[:min(1, len(args))], "") + "` builds or runs code", nil
		}
		if args[0] == "env" && len(args) > 1 && (strings.HasPrefix(args[1], "-w") || strings.HasPrefix(args[1], "-u")) {
			return Write, "`go env " + args[1] + "` changes the configuration", nil
		}
	case "gh":
		return ghClass(args)
	case "npm", "cargo":
		if len(args) == 0 || !map[string]bool{"ls": true, "list": true, "view": true, "--version": true, "-v": true, "tree": true, "metadata": true}[args[0]] {
			return Write, "`" + name + "` builds, installs or runs code", nil
		}
	case "env", "printenv":
		// (env with a command was unwrapped above)
	}
	return Read, "", nil
}

// runsCode reports whether a `git -c key=value` setting names a command
// git runs (a pager, an editor, a diff or filter program, an fsmonitor
// hook, a shell alias).
func runsCode(setting string) bool {
	key, _, _ := strings.Cut(strings.ToLower(setting), "=")
	for _, k := range []string{"fsmonitor", "external", "pager", "editor", "sshcommand", "textconv", "hookspath", "askpass", "command", "program", "alias.", "filter."} {
		if strings.Contains(key, k) {
			return true
		}
	}
	return false
}

// gitClass classifies git run with args: its subcommand (after -C, -c,
// --git-dir, --work-tree) reads, lists, or changes the repository.
func gitClass(args []string) (Class, string, []string) {
	sub := ""
	for k := 0; k < len(args); k++ {
		a := args[k]
		if a == "-c" && k+1 < len(args) && runsCode(args[k+1]) {
			return Write, "`git -c " + args[k+1] + "` runs a command of the configuration", nil
		}
		if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" {
			k++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			sub = a
			if k+1 < len(args) {
				args = args[k+1:]
			} else {
				args = nil
			}
			break
		}
	}
	switch {
	case gitReading[sub]:
		for _, a := range args {
			if a == "--output" || strings.HasPrefix(a, "--output=") || a == "-O" || strings.HasPrefix(a, "--open-files-in-pager") || strings.HasPrefix(a, "--ext-diff") {
				return Write, "`git " + sub + " " + a + "` writes a file or runs a command", nil
			}
		}
	case sub == "branch" || sub == "tag" || sub == "remote" || sub == "stash" && len(args) > 0 && args[0] == "list":
		for _, a := range args {
			if sub == "stash" || a == "-v" || a == "-vv" || a == "-a" || a == "-r" || a == "--list" || a == "-l" || a == "--show-current" || a == "--all" || a == "--verbose" || strings.HasPrefix(a, "--format") || strings.HasPrefix(a, "--sort") || strings.HasPrefix(a, "--contains") || strings.HasPrefix(a, "--merged") {
				continue
			}
			return Write, "`git " + sub + " " + a + "` changes the repository", nil
		}
	case sub == "config":
		if len(args) == 0 || (args[0] != "--get" && args[0] != "--list" && args[0] != "-l" && args[0] != "--get-all") {
			return Write, "`git config` may change the configuration", nil
		}
	default:
		return Write, "`git " + sub + "` changes the repository or runs code", nil
	}
	return Read, "", nil
}

// ghClass classifies the GitHub CLI run with args: viewing and listing
// read; gh api reads only without a method or fields; the rest may change
// things on GitHub.
func ghClass(args []string) (Class, string, []string) {
	if len(args) >= 2 && map[string]bool{"pr": true, "issue": true, "run": true, "repo": true, "release": true, "workflow": true}[args[0]] &&
		map[string]bool{"view": true, "list": true, "diff": true, "checks": true, "status": true}[args[1]] {
		return Read, "", nil
	}
	if len(args) >= 1 && args[0] == "api" {
		for _, a := range args[1:] {
			if a == "-X" || a == "--method" || a == "-f" || a == "-F" || a == "--field" || a == "--raw-field" || a == "--input" || strings.HasPrefix(a, "--method=") || strings.HasPrefix(a, "-X") && len(a) > 2 {
				return Write, "`gh api` with a method or fields may change things", nil
			}
		}
		if len(args) >= 2 && args[1] == "graphql" {
			return Write, "`gh api graphql` may run a mutation", nil
		}
		return Read, "", nil
	}
	return Write, "`gh " + strings.Join(args[:min(2, len(args))], " ") + "` may change things on GitHub", nil
}

// classifySessionvault classifies sessionvault's own command (after its
// name): a person's verb in any spelling, or a word that cannot be resolved,
// is Person; read verbs are Read; the rest is Way.
func classifySessionvault(args []string, known []bool) (Class, string, []string) {
	var verbs []string
	for k := 0; k < len(args); k++ {
		if !known[k] {
			return Person, "an argument of sessionvault is only known at run time, so it could be a person's command", nil
		}
		a := args[k]
		switch {
		case a == "--vault" || a == "--project" || a == "--op-id":
			k++
			if k < len(args) && !known[k] {
				return Person, "an argument of sessionvault is only known at run time", nil
			}
		case strings.HasPrefix(a, "-"):
		default:
			verbs = append(verbs, a)
		}
	}
	if len(verbs) > 0 && personVerbs[verbs[0]] {
		return Person, "`sessionvault " + verbs[0] + "` is a person's command", nil
	}
	if len(verbs) >= 3 && verbs[0] == "mode" && verbs[1] == "set" && strings.EqualFold(verbs[2], "disabled") {
		return Person, "`sessionvault mode set disabled` is a person's command", nil
	}
	if len(verbs) == 0 {
		return Read, "", nil
	}
	switch verbs[0] {
	case "status", "log", "check", "help", "gate", "blocked-reason", "version", "protocol", "doctor":
		return Read, "", nil
	}
	return Way, "", nil
}

func isSessionvault(word string) bool {
	b := filepath.Base(word)
	return b == "sessionvault" || b == "sessionvault-hook"
}

func isNumberish(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhd") == ""
}

// resolve returns the value a shell word has when it can be known without
// running anything: literals, quotes and escapes resolved ('dis”abled' and
// disable\d are "disabled"). Parameter expansions, command and arithmetic
// substitutions, globs' expansions and brace expansions are not resolved
// (ok false), except that a glob word keeps its literal text.
func resolve(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes a shell removes: before any character
// outside quotes, before $ ` " \ and a newline inside double quotes.
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			next := s[i+1]
			if !dquoted || strings.IndexByte("$`\"\\\n", next) >= 0 {
				if next != '\n' {
					b.WriteByte(next)
				}
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func printWord(w *syntax.Word) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, w) // a strings.Builder does not fail
	return b.String()
}
