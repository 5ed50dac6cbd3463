package graph

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// CypherOptions are the choices of WriteCypher.
type CypherOptions struct {
	// Constraints puts a uniqueness constraint per label first (Neo4j 5
	// syntax, CREATE CONSTRAINT ... IF NOT EXISTS), so that each MERGE
	// finds its node through an index. They are not openCypher, and are
	// written only when asked for; the header lists them as comments
	// either way.
	Constraints bool
}

// WriteCypher writes g as Cypher statements, one per line, each ending in
// ";" — what `cypher-shell -f FILE` loads. After a header of // comments:
//
//	MERGE (n:Task {project: 'demo', taskId: 'login'}) SET n.name = 'Login', n.status = 'pending', n.priority = 2, n.phase = null, ...;
//	MATCH (a:Session {project: 'demo', sessionId: '2026-11-20-session-01'}), (b:Task {project: 'demo', taskId: 'login'}) MERGE (a)-[:WORKS_ON]->(b);
//
// Every node is a MERGE on its key properties alone followed by a SET of
// each other property of its label (null for one it lacks, which removes a
// value an earlier load set), and every edge a MERGE between its two
// matched ends: loading the output any number of times leaves one node per
// key and one edge per type and ends, with the properties of the last load.
// Nodes come first, in Graph.Nodes order, then edges, in Graph.Edges order,
// so the same vault always gives the same bytes. Strings are single-quoted
// with \\, \', \n, \r, \t, \b, \f and \uXXXX escapes (control and format
// characters); other characters are written as UTF-8.
func WriteCypher(w io.Writer, g *Graph, o CypherOptions) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("// sessionvault graph export: sessions, updates, decisions, blockers, tasks, features and agents\n")
	bw.WriteString("// (sessions and their entries, the task graph). Load it with: cypher-shell -f FILE\n")
	bw.WriteString("// Every statement MERGEs on a stable key, so loading it again updates the graph and adds no duplicate.\n")
	bw.WriteString("// Keys (Neo4j 5 constraints that index them; `export cypher --constraints` runs them first):\n")
	constraints := constraintStatements()
	for _, c := range constraints {
		bw.WriteString("//   " + c + "\n")
	}
	if o.Constraints {
		for _, c := range constraints {
			bw.WriteString(c + "\n")
		}
	}
	var b strings.Builder
	for _, n := range g.Nodes() {
		b.Reset()
		s, _ := SchemaOf(n.Label)
		b.WriteString("MERGE (n")
		writePattern(&b, n)
		b.WriteString(")")
		for i, p := range s.Props {
			if i == 0 {
				b.WriteString(" SET ")
			} else {
				b.WriteString(", ")
			}
			b.WriteString("n." + p + " = ")
			writeValue(&b, n.Props[p])
		}
		b.WriteString(";\n")
		bw.WriteString(b.String())
	}
	for _, e := range g.Edges() {
		from, _ := g.Node(e.From)
		to, _ := g.Node(e.To)
		b.Reset()
		b.WriteString("MATCH (a")
		writePattern(&b, from)
		b.WriteString("), (b")
		writePattern(&b, to)
		b.WriteString(") MERGE (a)-[:" + e.Type + "]->(b);\n")
		bw.WriteString(b.String())
	}
	return bw.Flush()
}

// constraintStatements returns a uniqueness constraint per label, on its key.
func constraintStatements() []string {
	var out []string
	for _, l := range Labels() {
		s, _ := SchemaOf(l)
		props := make([]string, len(s.Key))
		for i, k := range s.Key {
			props[i] = "n." + k
		}
		on := props[0]
		if len(props) > 1 {
			on = "(" + strings.Join(props, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("CREATE CONSTRAINT sessionvault_%s IF NOT EXISTS FOR (n:%s) REQUIRE %s IS UNIQUE;", strings.ToLower(l), l, on))
	}
	return out
}

// writePattern writes ":Label {key: 'value', ...}".
func writePattern(b *strings.Builder, n *Node) {
	s, _ := SchemaOf(n.Label)
	b.WriteString(":" + n.Label + " {")
	for i, k := range s.Key {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": ")
		writeString(b, n.Key[i])
	}
	b.WriteString("}")
}

// writeValue writes a property value as a Cypher literal: nil as null.
func writeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
			return
		}
		f := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(f, ".eE") {
			f += ".0" // a float stays a float: 2.0, not 2
		}
		b.WriteString(f)
	case []string:
		b.WriteString("[")
		for i, s := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, s)
		}
		b.WriteString("]")
	default:
		writeString(b, fmt.Sprint(x))
	}
}

// writeString writes s as a single-quoted Cypher string literal. Invalid
// UTF-8 is written as U+FFFD. A \uXXXX escape is never followed by a hex
// digit as it is (that digit is escaped too), so no reader can take the
// escape for the eight-digit form.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('\'')
	afterU := false
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x10000 && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'),
			afterU && strings.ContainsRune("0123456789abcdefABCDEF", r):
			// Control and invisible format characters (NUL, ESC, a bidi
			// override, a line separator) are escaped, so the file shows
			// what it holds and no line is split.
			fmt.Fprintf(b, `\u%04X`, r)
			afterU = true
			continue
		default:
			b.WriteRune(r)
		}
		afterU = false
	}
	b.WriteByte('\'')
}
