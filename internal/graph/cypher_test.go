package graph_test

// The Cypher export is checked with a real openCypher parser: the ANTLR
// parser generated from the openCypher grammar (Cypher.g4, openCypher
// Implementers Group) that github.com/cloudprivacylabs/opencypher/parser
// ships, on the antlr4 Go runtime. It is a test-only dependency: nothing
// in the binary imports it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/antlr/antlr4/runtime/Go/antlr"
	cypher "github.com/cloudprivacylabs/opencypher/parser"

	"github.com/sessionvault/sessionvault/internal/graph"
)

// Every statement the export writes for the example vault and for the
// hostile fixture parses as openCypher; its parse tree shows only MERGE and
// SET as updating clauses, every MERGE of a node on exactly its label's key,
// every relationship MERGEd between two nodes MATCHed on their keys. Loaded
// twice into one graph, the statements leave the counts (and properties) of
// one load, which are the JSON export's nodes and edges; a second export of
// the unchanged vault is byte-identical.
func TestCypherParsesAndLoadsIdempotently(t *testing.T) {
	for _, src := range []string{exampleVault, fixtureVault} {
		t.Run(strings.ReplaceAll(src, "/", "_"), func(t *testing.T) {
			svc := openVault(t, src)
			g := build(t, svc)
			var first, second bytes.Buffer
			if err := graph.WriteCypher(&first, g, graph.CypherOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := graph.WriteCypher(&second, build(t, svc), graph.CypherOptions{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Fatal("a second export of the unchanged vault differs")
			}
			text := first.String()
			stmts := splitStatements(t, text)
			if want := len(g.Nodes()) + len(g.Edges()); len(stmts) != want {
				t.Fatalf("%d statements, want one per node and edge: %d", len(stmts), want)
			}
			// One statement per line, and the file holds no raw control
			// character but the line ends.
			for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || r == '\u2028' || r == '\u202e' }) {
					t.Errorf("line %d holds a raw control character: %q", i+1, line)
				}
				if !strings.HasPrefix(line, "//") && !strings.HasSuffix(line, ";") {
					t.Errorf("line %d is not one whole statement: %q", i+1, line)
				}
			}

			var effects []effect
			for _, s := range stmts {
				effects = append(effects, checkStatement(t, s))
			}
			loaded := newMemGraph()
			for _, e := range effects {
				loaded.apply(t, e)
			}
			once := loaded.clone()
			for _, e := range effects {
				loaded.apply(t, e)
			}
			if len(once.nodes) != len(g.Nodes()) || len(once.edges) != len(g.Edges()) {
				t.Errorf("one load: %d nodes, %d edges; the graph has %d and %d", len(once.nodes), len(once.edges), len(g.Nodes()), len(g.Edges()))
			}
			if len(loaded.nodes) != len(once.nodes) || len(loaded.edges) != len(once.edges) {
				t.Errorf("two loads: %d nodes, %d edges; one load: %d and %d", len(loaded.nodes), len(loaded.edges), len(once.nodes), len(once.edges))
			}
			if !maps.EqualFunc(loaded.nodes, once.nodes, func(a, b map[string]any) bool { return jsonText(t, a) == jsonText(t, b) }) {
				t.Error("a second load changed properties")
			}
			loaded.sameAsJSON(t, g)
		})
	}
}

// The hostile strings come back exactly: quotes, backslashes, newlines,
// NUL, a bidi override, an escape followed by hex digits, CJK and emoji.
func TestCypherStringsRoundTrip(t *testing.T) {
	g := build(t, openVault(t, fixtureVault))
	var out bytes.Buffer
	if err := graph.WriteCypher(&out, g, graph.CypherOptions{}); err != nil {
		t.Fatal(err)
	}
	loaded := newMemGraph()
	for _, s := range splitStatements(t, out.String()) {
		loaded.apply(t, checkStatement(t, s))
	}
	for id, want := range map[string]map[string]string{
		"Session:lab/2026-11-22-session-01": {
			"objective": "Quotes ' \" and back\\slashes\\, a tab\there,\na newline, NUL \x00, bell \a, ünïcødé, 🚀, RTL \u202eevil\u202c, line sep \u2028 end",
		},
		"Decision:lab%2Fdecisions%2F2026-11-22-hostile": {
			"title":     `Robert'); MATCH (n) DETACH DELETE n; // "x" \\ \n`,
			"choice":    `C:\temp\new ' quoted`,
			"rationale": `because \' is no escape in markdown`,
		},
		"Task:lab/login-ui":                     {"name": "Login screen, ESC then hex digits: \x1babc1"},
		"Update:lab/2026-11-22-session-01/u-2":  {"message": "*/ CREATE (x:Evil) /* ; // not a comment"},
		"Update:lab/2026-11-22-session-01/u-10": {"message": "日本語のメッセージ — with an em dash and 👩‍💻"},
		"Blocker:lab/2026-11-22-session-01/b-1": {"description": "Can't load '; DROP DATABASE neo4j; --"},
	} {
		n, ok := g.Node(id)
		if !ok {
			t.Fatalf("no node %s", id)
		}
		props := loaded.nodes[memID(n.Label, n.KeyProps())]
		for k, v := range want {
			if n.Props[k] != v {
				t.Errorf("%s.%s read from the notes = %q, want %q", id, k, n.Props[k], v)
			}
			if props[k] != v {
				t.Errorf("%s.%s after loading the Cypher = %q, want %q", id, k, props[k], v)
			}
		}
	}
	if !strings.Contains(out.String(), `ESC then hex digits: \u001B\u0061\u0062\u0063\u0031'`) {
		t.Error("hex digits after an escape are not escaped")
	}
}

// --constraints puts one constraint per label first; the rest is the same.
func TestCypherConstraints(t *testing.T) {
	g := build(t, openVault(t, exampleVault))
	var plain, with bytes.Buffer
	if err := graph.WriteCypher(&plain, g, graph.CypherOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := graph.WriteCypher(&with, g, graph.CypherOptions{Constraints: true}); err != nil {
		t.Fatal(err)
	}
	var constraints []string
	rest := &strings.Builder{}
	for _, line := range strings.SplitAfter(with.String(), "\n") {
		if strings.HasPrefix(line, "CREATE CONSTRAINT ") {
			constraints = append(constraints, line)
		} else {
			rest.WriteString(line)
		}
	}
	if len(constraints) != len(graph.Labels()) || rest.String() != plain.String() {
		t.Errorf("%d constraints (want %d); rest equal: %v", len(constraints), len(graph.Labels()), rest.String() == plain.String())
	}
	if !strings.Contains(with.String(), "CREATE CONSTRAINT sessionvault_session IF NOT EXISTS FOR (n:Session) REQUIRE (n.project, n.sessionId) IS UNIQUE;\n") {
		t.Error("no composite constraint for Session")
	}
	if strings.Contains(plain.String(), "\nCREATE") {
		t.Error("CREATE outside a comment without --constraints")
	}
}

// splitStatements cuts src at the ";" tokens of the openCypher lexer (a ";"
// in a string or a comment is part of that token) and returns each
// statement, its ";" included. The text after the last one must be
// whitespace and comments.
func splitStatements(t *testing.T, src string) []string {
	t.Helper()
	lx := cypher.NewCypherLexer(antlr.NewInputStream(src))
	errs := &syntaxErrors{}
	lx.RemoveErrorListeners()
	lx.AddErrorListener(errs)
	var out []string
	var cur strings.Builder
	blank := true
	for _, tok := range lx.GetAllTokens() {
		cur.WriteString(tok.GetText())
		if tok.GetTokenType() != cypher.CypherLexerSP {
			blank = false
		}
		if tok.GetTokenType() == cypher.CypherLexerT__0 { // ';'
			out = append(out, cur.String())
			cur.Reset()
			blank = true
		}
	}
	if len(errs.msgs) > 0 {
		t.Fatalf("the lexer fails: %v", errs.msgs)
	}
	if !blank {
		t.Fatalf("text after the last statement: %q", cur.String())
	}
	return out
}

type syntaxErrors struct {
	antlr.DefaultErrorListener
	msgs []string
}

func (e *syntaxErrors) SyntaxError(_ antlr.Recognizer, _ any, line, column int, msg string, _ antlr.RecognitionException) {
	e.msgs = append(e.msgs, fmt.Sprintf("%d:%d: %s", line, column, msg))
}

// effect is what one statement does to a graph: MERGE a node (label and
// key) and SET its properties, or MERGE an edge between two MATCHed nodes.
type effect struct {
	label string
	key   map[string]any
	set   map[string]any // nil value: the property is removed

	relType  string
	from, to struct {
		label string
		key   map[string]any
	}
}

// checkStatement parses one statement and reads its effect from the parse
// tree, failing the test unless the statement is one of the two idempotent
// shapes:
//
//	MERGE (n:L {key...}) [SET n.p = literal, ...]
//	MATCH (a:L {key...}), (b:M {key...}) MERGE (a)-[:T]->(b)
func checkStatement(t *testing.T, stmt string) effect {
	t.Helper()
	p := cypher.NewCypherParser(antlr.NewCommonTokenStream(cypher.NewCypherLexer(antlr.NewInputStream(stmt)), antlr.TokenDefaultChannel))
	errs := &syntaxErrors{}
	p.RemoveErrorListeners()
	p.AddErrorListener(errs)
	p.BuildParseTrees = true
	tree := p.OC_Cypher()
	if len(errs.msgs) > 0 {
		t.Fatalf("does not parse (%v): %s", errs.msgs, stmt)
	}
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("%s: %s", fmt.Sprintf(format, a...), stmt)
	}
	// No clause but MATCH, MERGE and SET: nothing that creates, deletes,
	// returns, calls or chains.
	if n := len(find[*cypher.OC_CreateContext](tree)) + len(find[*cypher.OC_DeleteContext](tree)) + len(find[*cypher.OC_RemoveContext](tree)) +
		len(find[*cypher.OC_ReturnContext](tree)) + len(find[*cypher.OC_WithContext](tree)) + len(find[*cypher.OC_UnwindContext](tree)) +
		len(find[*cypher.OC_UnionContext](tree)) + len(find[*cypher.OC_MergeActionContext](tree)) + len(find[*cypher.OC_InQueryCallContext](tree)) +
		len(find[*cypher.OC_StandaloneCallContext](tree)) + len(find[*cypher.OC_WhereContext](tree)); n > 0 {
		fail("a clause other than MATCH, MERGE and SET")
	}
	for _, u := range find[*cypher.OC_UpdatingClauseContext](tree) {
		if u.OC_Merge() == nil && u.OC_Set() == nil {
			fail("an updating clause other than MERGE or SET")
		}
	}
	merges := find[*cypher.OC_MergeContext](tree)
	if len(merges) != 1 {
		fail("%d MERGE clauses, want 1", len(merges))
	}
	elems := find[*cypher.OC_PatternElementContext](merges[0])
	if len(elems) != 1 {
		fail("a MERGE of %d pattern elements", len(elems))
	}
	chains := elems[0].AllOC_PatternElementChain()
	matched := map[string]struct {
		label string
		key   map[string]any
	}{}
	for _, m := range find[*cypher.OC_MatchContext](tree) {
		if m.OPTIONAL() != nil {
			fail("OPTIONAL MATCH")
		}
		for _, np := range find[*cypher.OC_NodePatternContext](m) {
			v, label, props := nodePattern(t, np, stmt)
			checkKey(t, label, props, stmt)
			matched[v] = struct {
				label string
				key   map[string]any
			}{label, props}
		}
	}

	var e effect
	switch len(chains) {
	case 0: // a node: MERGE on its key, SET the rest
		if len(matched) > 0 {
			fail("a node MERGE after MATCH")
		}
		v, label, props := nodePattern(t, elems[0].OC_NodePattern().(*cypher.OC_NodePatternContext), stmt)
		checkKey(t, label, props, stmt)
		e.label, e.key, e.set = label, props, map[string]any{}
		s, _ := graph.SchemaOf(label)
		for _, item := range find[*cypher.OC_SetItemContext](tree) {
			pe, ok := item.OC_PropertyExpression().(*cypher.OC_PropertyExpressionContext)
			if !ok || item.OC_Expression() == nil || len(pe.AllOC_PropertyLookup()) != 1 || pe.OC_Atom().GetText() != v {
				fail("a SET item other than %s.property = value", v)
			}
			name := pe.OC_PropertyLookup(0).(*cypher.OC_PropertyLookupContext).OC_PropertyKeyName().GetText()
			if slices.Contains(s.Key, name) || !slices.Contains(s.Props, name) {
				fail("SET of %s, no property of %s besides its key", name, label)
			}
			e.set[name] = literal(t, item.OC_Expression(), stmt)
		}
	case 1: // an edge: MERGE between two matched nodes
		if len(find[*cypher.OC_SetContext](tree)) > 0 {
			fail("SET on an edge")
		}
		a, la, pa := nodePattern(t, elems[0].OC_NodePattern().(*cypher.OC_NodePatternContext), stmt)
		chain := chains[0].(*cypher.OC_PatternElementChainContext)
		b, lb, pb := nodePattern(t, chain.OC_NodePattern().(*cypher.OC_NodePatternContext), stmt)
		if la != "" || lb != "" || pa != nil || pb != nil {
			fail("the ends of a MERGEd edge must be the MATCHed variables alone")
		}
		from, okA := matched[a]
		to, okB := matched[b]
		if !okA || !okB || len(matched) != 2 {
			fail("the ends of the edge are not the two MATCHed nodes")
		}
		rel := chain.OC_RelationshipPattern().(*cypher.OC_RelationshipPatternContext)
		if rel.OC_LeftArrowHead() != nil || rel.OC_RightArrowHead() == nil {
			fail("an edge that is not directed left to right")
		}
		d, ok := rel.OC_RelationshipDetail().(*cypher.OC_RelationshipDetailContext)
		if !ok || d.OC_Variable() != nil || d.OC_RangeLiteral() != nil || d.OC_Properties() != nil || d.OC_RelationshipTypes() == nil {
			fail("an edge with more than a type")
		}
		types := d.OC_RelationshipTypes().(*cypher.OC_RelationshipTypesContext).AllOC_RelTypeName()
		if len(types) != 1 || !slices.Contains(graph.RelationshipTypes(), types[0].GetText()) {
			fail("an edge type other than one of the graph's")
		}
		e.relType, e.from, e.to = types[0].GetText(), from, to
	default:
		fail("a MERGE of a path")
	}
	return e
}

// nodePattern reads "(v:Label {k: literal, ...})": its variable, its one
// label ("" for none) and its properties (nil for none).
func nodePattern(t *testing.T, np *cypher.OC_NodePatternContext, stmt string) (variable, label string, props map[string]any) {
	t.Helper()
	if np.OC_Variable() == nil {
		t.Fatalf("a node without a variable: %s", stmt)
	}
	variable = np.OC_Variable().GetText()
	labels := find[*cypher.OC_NodeLabelContext](np)
	switch len(labels) {
	case 0:
	case 1:
		label = labels[0].OC_LabelName().GetText()
	default:
		t.Fatalf("a node with %d labels: %s", len(labels), stmt)
	}
	if np.OC_Properties() == nil {
		return variable, label, nil
	}
	m, ok := np.OC_Properties().(*cypher.OC_PropertiesContext).OC_MapLiteral().(*cypher.OC_MapLiteralContext)
	if !ok {
		t.Fatalf("node properties that are no map: %s", stmt)
	}
	props = map[string]any{}
	for i, k := range m.AllOC_PropertyKeyName() {
		props[k.GetText()] = literal(t, m.OC_Expression(i), stmt)
	}
	return variable, label, props
}

// checkKey fails unless props are exactly label's key properties, each a
// non-empty string.
func checkKey(t *testing.T, label string, props map[string]any, stmt string) {
	t.Helper()
	s, ok := graph.SchemaOf(label)
	if !ok || len(props) != len(s.Key) {
		t.Fatalf("a node pattern not on exactly the key of %q: %s", label, stmt)
	}
	for _, k := range s.Key {
		if v, ok := props[k].(string); !ok || v == "" {
			t.Fatalf("key property %s of %s is missing or no string: %s", k, label, stmt)
		}
	}
}

// literal reads an expression that must be a literal: a string (its
// escapes resolved as the openCypher grammar's EscapedChar gives them), an
// integer (optionally negated), a float, a boolean, null, or a list of
// strings.
func literal(t *testing.T, expr antlr.Tree, stmt string) any {
	t.Helper()
	neg := false
	n := expr
	for {
		if lit, ok := n.(*cypher.OC_LiteralContext); ok {
			return literalValue(t, lit, neg, stmt)
		}
		var only antlr.Tree
		count := 0
		for i := 0; i < n.GetChildCount(); i++ {
			c := n.GetChild(i)
			if term, ok := c.(antlr.TerminalNode); ok {
				switch {
				case term.GetSymbol().GetTokenType() == cypher.CypherLexerSP:
					continue
				case term.GetText() == "-":
					if _, unary := n.(*cypher.OC_UnaryAddOrSubtractExpressionContext); unary {
						neg = !neg
						continue
					}
				}
			}
			only = c
			count++
		}
		if count != 1 {
			t.Fatalf("a value that is no literal (%s): %s", expr.(antlr.ParseTree).GetText(), stmt)
		}
		n = only
	}
}

func literalValue(t *testing.T, lit *cypher.OC_LiteralContext, neg bool, stmt string) any {
	t.Helper()
	switch {
	case lit.StringLiteral() != nil && !neg:
		s, err := unescape(lit.StringLiteral().GetText())
		if err != nil {
			t.Fatalf("%v: %s", err, stmt)
		}
		return s
	case lit.OC_NumberLiteral() != nil:
		num := lit.OC_NumberLiteral().(*cypher.OC_NumberLiteralContext)
		text := num.GetText()
		if neg {
			text = "-" + text
		}
		if num.OC_IntegerLiteral() != nil {
			i, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				t.Fatalf("%v: %s", err, stmt)
			}
			return i
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			t.Fatalf("%v: %s", err, stmt)
		}
		return f
	case lit.OC_BooleanLiteral() != nil && !neg:
		return lit.OC_BooleanLiteral().(*cypher.OC_BooleanLiteralContext).TRUE() != nil
	case lit.NULL() != nil && !neg:
		return nil
	case lit.OC_ListLiteral() != nil && !neg:
		var out []string
		for _, e := range lit.OC_ListLiteral().(*cypher.OC_ListLiteralContext).AllOC_Expression() {
			s, ok := literal(t, e, stmt).(string)
			if !ok {
				t.Fatalf("a list of other than strings: %s", stmt)
			}
			out = append(out, s)
		}
		return out
	}
	t.Fatalf("an unexpected literal %s: %s", lit.GetText(), stmt)
	return nil
}

// unescape resolves a StringLiteral token's escapes (openCypher EscapedChar:
// \\ \' \" \b \f \n \r \t, \uXXXX as UTF-16, \UXXXXXXXX).
func unescape(tok string) (string, error) {
	r := []rune(tok[1 : len(tok)-1])
	var units []uint16
	var out strings.Builder
	flush := func() {
		if len(units) > 0 {
			out.WriteString(string(utf16.Decode(units)))
			units = nil
		}
	}
	for i := 0; i < len(r); i++ {
		if r[i] != '\\' {
			flush()
			out.WriteRune(r[i])
			continue
		}
		i++
		if i >= len(r) {
			return "", fmt.Errorf("a lone backslash in %s", tok)
		}
		c := r[i]
		if c == 'u' || c == 'U' {
			n := 4
			if c == 'U' {
				n = 8
			}
			if i+n >= len(r)+1 {
				return "", fmt.Errorf("a short \\%c escape in %s", c, tok)
			}
			v, err := strconv.ParseUint(string(r[i+1:i+1+n]), 16, 32)
			if err != nil {
				return "", fmt.Errorf("a bad \\%c escape in %s", c, tok)
			}
			if n == 4 {
				units = append(units, uint16(v))
			} else {
				flush()
				out.WriteRune(rune(v))
			}
			i += n
			continue
		}
		flush()
		switch c {
		case '\\', '\'', '"':
			out.WriteRune(c)
		case 'b', 'B':
			out.WriteByte('\b')
		case 'f', 'F':
			out.WriteByte('\f')
		case 'n', 'N':
			out.WriteByte('\n')
		case 'r', 'R':
			out.WriteByte('\r')
		case 't', 'T':
			out.WriteByte('\t')
		default:
			return "", fmt.Errorf("an unknown escape \\%c in %s", c, tok)
		}
	}
	flush()
	return out.String(), nil
}

// find returns the nodes of type T in the parse tree under root, root
// included, in document order.
func find[T antlr.Tree](root antlr.Tree) []T {
	var out []T
	var walk func(n antlr.Tree)
	walk = func(n antlr.Tree) {
		if x, ok := n.(T); ok {
			out = append(out, x)
		}
		for i := 0; i < n.GetChildCount(); i++ {
			walk(n.GetChild(i))
		}
	}
	walk(root)
	return out
}

// memGraph is a graph as a database keeps it after MERGE and SET: one node
// per label and key with its properties, one edge per type and ends.
type memGraph struct {
	nodes map[string]map[string]any
	edges map[[3]string]bool
}

func newMemGraph() *memGraph {
	return &memGraph{nodes: map[string]map[string]any{}, edges: map[[3]string]bool{}}
}

func memID(label string, key map[string]string) string {
	s, _ := graph.SchemaOf(label)
	id := label
	for _, k := range s.Key {
		id += "\x00" + key[k]
	}
	return id
}

func memKey(props map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		out[k], _ = v.(string)
	}
	return out
}

// apply runs one statement's effect: MERGE finds the node with the key or
// makes it; SET sets (or, with null, removes) a property; an edge's MATCH
// must find both ends.
func (m *memGraph) apply(t *testing.T, e effect) {
	t.Helper()
	if e.relType == "" {
		id := memID(e.label, memKey(e.key))
		n, ok := m.nodes[id]
		if !ok {
			n = maps.Clone(e.key)
			m.nodes[id] = n
		}
		for k, v := range e.set {
			if v == nil {
				delete(n, k)
			} else {
				n[k] = v
			}
		}
		return
	}
	from, to := memID(e.from.label, memKey(e.from.key)), memID(e.to.label, memKey(e.to.key))
	if m.nodes[from] == nil || m.nodes[to] == nil {
		t.Fatalf("%s edge: a MATCHed end is no node yet (the edge would be lost): %q -> %q", e.relType, from, to)
	}
	m.edges[[3]string{from, e.relType, to}] = true
}

func (m *memGraph) clone() *memGraph {
	c := newMemGraph()
	for id, props := range m.nodes {
		c.nodes[id] = maps.Clone(props)
	}
	maps.Copy(c.edges, m.edges)
	return c
}

// sameAsJSON checks the loaded graph is the JSON export of g: the same
// nodes with the same properties, the same edges.
func (m *memGraph) sameAsJSON(t *testing.T, g *graph.Graph) {
	t.Helper()
	var buf bytes.Buffer
	if err := graph.WriteJSON(&buf, g); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var doc struct {
		Nodes []struct {
			ID         string         `json:"id"`
			Label      string         `json:"label"`
			Properties map[string]any `json:"properties"`
		} `json:"nodes"`
		Edges []struct{ From, To, Type string } `json:"edges"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, n := range doc.Nodes {
		id := memID(n.Label, memKey(n.Properties))
		ids[n.ID] = id
		if got, want := jsonText(t, m.nodes[id]), jsonText(t, n.Properties); got != want {
			t.Errorf("%s loaded from Cypher:\n%s\nin the JSON export:\n%s", n.ID, got, want)
		}
	}
	if len(doc.Nodes) != len(m.nodes) {
		t.Errorf("%d nodes loaded, %d in the JSON export", len(m.nodes), len(doc.Nodes))
	}
	for _, e := range doc.Edges {
		if !m.edges[[3]string{ids[e.From], e.Type, ids[e.To]}] {
			t.Errorf("edge %v of the JSON export was not loaded", e)
		}
	}
	if len(doc.Edges) != len(m.edges) {
		t.Errorf("%d edges loaded, %d in the JSON export", len(m.edges), len(doc.Edges))
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
