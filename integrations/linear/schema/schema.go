// Package schema holds the one copy of Linear's public GraphQL schema (SDL)
// in this repository, schema.graphql: an unmodified copy of linear/linear's
// packages/sdk/src/schema.graphql (provenance, licence and how to refresh it:
// ../PROVENANCE.md).
//
// Two things read it: genqlient, which generates ../generated.go from it
// (../genqlient.yaml names schema/schema.graphql), and the fake Linear
// server ../lineartest, which embeds it through SDL to validate every
// request against the real schema.
package schema

import _ "embed"

//go:embed schema.graphql
var sdl string

// SDL returns the text of schema.graphql, Linear's schema as published.
func SDL() string { return sdl }
