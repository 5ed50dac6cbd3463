package cli

import (
	"context"
	"encoding/json"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/templates"
)

// sourceWords are the names of the team's sources, which a user cannot look
// up: what a user reads names features by their own names.
var sourceWords = regexp.MustCompile(`(?i)\bseed [0-9]|\bseed's\b|\bthe seed\b|\bDESIGN\b|§|\.\./shared|\bcomponent [0-9]`)

// No text a user reads — any command's --help, an MCP tool's name,
// description or schema, an error code's name, a note template — names a
// seed, DESIGN, a § or ../shared; a flag's value is shown by a placeholder
// (--file FILE), a switch's by none.
func TestUserTextNamesNoSources(t *testing.T) {
	t.Parallel()
	check := func(where, text string) {
		if m := sourceWords.FindString(text); m != "" {
			t.Errorf("%s says %q: %s", where, m, text)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check(c.CommandPath()+" (use)", c.Use)
		check(c.CommandPath()+" (short)", c.Short)
		check(c.CommandPath()+" (long)", c.Long)
		check(c.CommandPath()+" (example)", c.Example)
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			check(c.CommandPath()+" --"+f.Name, f.Usage)
			// cobra takes the first back-quoted word of a flag's help as
			// the name of its value: it must be a placeholder (FILE), and
			// a switch has none.
			if name, _ := pflag.UnquoteUsage(f); strings.Contains(f.Usage, "`") && (f.Value.Type() == "bool" || name != strings.ToUpper(name)) {
				t.Errorf("%s --%s shows its value as %q: %s", c.CommandPath(), f.Name, name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk((&app{}).rootCommand(""))

	tools, err := inMemory(t, newVault(t)).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool)
		check("MCP tool "+tool.Name, string(b))
	}
	for _, c := range errs.All {
		check("error "+c.ID, c.ID+" "+c.Name)
	}
	fs.WalkDir(templates.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := templates.FS.ReadFile(p)
			check("template "+p, string(b))
		}
		return nil
	})
	if n := strings.Count(sourceWords.String(), "|"); n < 5 {
		t.Fatal("the pattern lost its alternatives")
	}
}

// Every command the error reference tells a user to run (`sessionvault
// task new NAME`, ...) is a command that exists.
func TestErrorFixesNameRealCommands(t *testing.T) {
	t.Parallel()
	root := (&app{}).rootCommand("")
	cmdRe := regexp.MustCompile("`sessionvault ([^`]*)`")
	for _, c := range errs.All {
		for _, m := range cmdRe.FindAllStringSubmatch(errs.DocOf(c).Fix, -1) {
			var words []string
			for _, w := range strings.Fields(m[1]) {
				if strings.HasPrefix(w, "-") || strings.ToUpper(w) == w || strings.ContainsAny(w, "|.") {
					break // flags, placeholders and alternatives follow the command's name
				}
				words = append(words, w)
			}
			if len(words) == 0 {
				continue // `sessionvault COMMAND --help`: any command
			}
			found, rest, err := root.Find(words)
			if err != nil || len(rest) > 0 || found == root {
				t.Errorf("%s's fix names `sessionvault %s`, which is no command", c.ID, m[1])
			}
		}
	}
}
