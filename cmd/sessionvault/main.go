// Command sessionvault keeps an AI coding agent's session state in a
// git-versioned Obsidian vault. See `sessionvault --help`.
package main

import (
	"os"

	"github.com/sessionvault/sessionvault/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
