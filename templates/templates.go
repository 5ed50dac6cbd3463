// Package templates holds the note templates sessionvault writes new notes
// from (text/template, embedded with go:embed). A vault overrides any of them
// by placing a file of the same name in .sessionvault/templates/.
package templates

import "embed"

// FS holds the default templates: the four canonical notes, a decision note
// and the default session protocol.
//
//go:embed *.md
var FS embed.FS
