// Package templates holds the note templates sessionvault writes new notes
// from (text/template, embedded with go:embed). A vault overrides any of them
// by placing a file of the same name in .sessionvault/templates/.
package templates

import "embed"

// FS holds the default templates: the four canonical notes, a decision note,
// task, feature and list notes, the default session protocol, and the
// Obsidian base of a project's features (features.base).
//
//go:embed *.md *.base
var FS embed.FS
