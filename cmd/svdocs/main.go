// Command svdocs writes the references generated from the code — the
// command pages (docs/cli/), the MCP tools (docs/mcp-tools.md), the error
// codes (docs/errors.md) — and man pages: `make docs`.
//
// Usage: svdocs [-man DIR] [DOCS_DIR]   (default docs, no man pages)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/sessionvault/sessionvault/internal/cli"
)

func main() {
	man := flag.String("man", "", "also write man pages into this folder")
	flag.Parse()
	dir := "docs"
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	w := cli.DocWriters{
		Markdown: doc.GenMarkdownTree,
		Man: func(root *cobra.Command, dir string) error {
			return doc.GenManTree(root, &doc.GenManHeader{Title: "SESSIONVAULT", Section: "1"}, dir)
		},
	}
	if err := cli.WriteDocs(dir, *man, w); err != nil {
		fmt.Fprintln(os.Stderr, "svdocs:", err)
		os.Exit(1)
	}
}
