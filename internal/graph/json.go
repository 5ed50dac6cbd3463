package graph

import (
	"encoding/json"
	"io"
)

// Document is the JSON export of a graph: {"nodes":[...],"edges":[...]}.
type Document struct {
	Nodes []JSONNode `json:"nodes"`
	Edges []JSONEdge `json:"edges"`
}

// JSONNode is a node of Document: its id (Node.ID), label, and properties,
// the key properties included.
type JSONNode struct {
	ID         string         `json:"id"`
	Label      string         `json:"label"`
	Properties map[string]any `json:"properties"`
}

// JSONEdge is an edge of Document: the ids of its ends, its type, and its
// properties (none yet: always {}).
type JSONEdge struct {
	From       string         `json:"from"`
	To         string         `json:"to"`
	Type       string         `json:"type"`
	Properties map[string]any `json:"properties"`
}

// DocumentOf returns g as a Document: nodes and edges in the order of
// Graph.Nodes and Graph.Edges; every edge's ends are nodes of the document.
func DocumentOf(g *Graph) Document {
	d := Document{Nodes: []JSONNode{}, Edges: []JSONEdge{}}
	for _, n := range g.Nodes() {
		props := make(map[string]any, len(n.Key)+len(n.Props))
		for k, v := range n.KeyProps() {
			props[k] = v
		}
		for k, v := range n.Props {
			props[k] = v
		}
		d.Nodes = append(d.Nodes, JSONNode{ID: n.ID(), Label: n.Label, Properties: props})
	}
	for _, e := range g.Edges() {
		d.Edges = append(d.Edges, JSONEdge{From: e.From, To: e.To, Type: e.Type, Properties: map[string]any{}})
	}
	return d
}

// WriteJSON writes g as an indented Document (object keys sorted, "<", ">"
// and "&" as they are), ending in a newline: the same vault always gives the
// same bytes.
func WriteJSON(w io.Writer, g *Graph) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(DocumentOf(g))
}
