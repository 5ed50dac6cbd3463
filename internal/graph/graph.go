// Package graph is the vault as a property graph, for Neo4j and other graph
// tools: nodes for sessions, their updates, decisions and blockers, tasks,
// features and agents, and the relationships between them, built from the
// notes through the session service's reads (Build) and written as idempotent
// Cypher (WriteCypher) or as JSON (WriteJSON). It only reads the vault.
//
// Every node has a stable key (Schema.Key): the properties that identify it
// across exports, so that loading an export again updates the nodes it made
// instead of adding new ones. Property names are camelCase (sessionId,
// taskId); times are ISO 8601 strings in UTC ("2026-11-20T09:02:11Z").
package graph

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/note"
)

// Node labels: a session with its updates, decisions and blockers; tasks,
// agents and features.
const (
	LabelAgent    = "Agent"
	LabelBlocker  = "Blocker"
	LabelDecision = "Decision"
	LabelFeature  = "Feature"
	LabelSession  = "Session"
	LabelTask     = "Task"
	LabelUpdate   = "Update"
)

// Relationship types, with the labels they join.
const (
	Continues    = "CONTINUES"     // (Session)->(Session): the session it continues (start --continue)
	HasUpdate    = "HAS_UPDATE"    // (Session)->(Update)
	MadeDecision = "MADE_DECISION" // (Session)->(Decision)
	Encountered  = "ENCOUNTERED"   // (Session)->(Blocker)
	Resolved     = "RESOLVED"      // (Decision)->(Blocker): the blocker's resolution links the decision's note
	WorksOn      = "WORKS_ON"      // (Session)->(Task): the session's active_task
	Invoked      = "INVOKED"       // (Session)->(Agent): the session's agent invocations, active_agent and agents
	Blocks       = "BLOCKS"        // (Task)->(Task): blocks
	DependsOn    = "DEPENDS_ON"    // (Task)->(Task): depends_on
	RelatedTo    = "RELATED_TO"    // (Task)->(Task): related_to
	ChildOf      = "CHILD_OF"      // (Task)->(Task): parent
	HasTask      = "HAS_TASK"      // (Feature)->(Task): the feature note's tasks and its links to task notes
	Decided      = "DECIDED"       // (Agent)->(Decision): decided_by of the decision's note
	Approved     = "APPROVED"      // (Agent)->(Decision): approved_by
	Rejected     = "REJECTED"      // (Agent)->(Decision): rejected_by
)

// Schema is what a label's nodes carry: Key, the properties that identify a
// node (a MERGE matches on them and on nothing else), and Props, the other
// properties, in the order they are written.
type Schema struct {
	Key   []string
	Props []string
}

// Labels returns the node labels, sorted.
func Labels() []string {
	return []string{LabelAgent, LabelBlocker, LabelDecision, LabelFeature, LabelSession, LabelTask, LabelUpdate}
}

// RelationshipTypes returns the relationship types, sorted.
func RelationshipTypes() []string {
	t := []string{Continues, HasUpdate, MadeDecision, Encountered, Resolved, WorksOn, Invoked, Blocks, DependsOn,
		RelatedTo, ChildOf, HasTask, Decided, Approved, Rejected}
	slices.Sort(t)
	return t
}

// SchemaOf returns the schema of label; ok is false for a label this package
// does not make.
func SchemaOf(label string) (s Schema, ok bool) {
	switch label {
	case LabelAgent:
		return Schema{Key: []string{"name"}}, true
	case LabelBlocker:
		return Schema{Key: []string{"project", "sessionId", "blockerId"},
			Props: []string{"description", "severity", "status", "resolution", "resolvedAt", "timestamp"}}, true
	case LabelDecision:
		// The key is the decision note's path from the vault root without
		// .md ("demo/decisions/2026-11-20-use-pkce"): unique in the vault,
		// where entry ids (d-1) repeat from session to session.
		return Schema{Key: []string{"decisionId"},
			Props: []string{"project", "sessionId", "entryId", "title", "choice", "rationale", "alternatives", "impact", "category", "timestamp", "note"}}, true
	case LabelFeature:
		return Schema{Key: []string{"project", "featureId"},
			Props: []string{"name", "status", "startedAt", "lastActive", "note"}}, true
	case LabelSession:
		// Session ids count per project (YYYY-MM-DD-session-NN), so the
		// project is part of the key.
		return Schema{Key: []string{"project", "sessionId"},
			Props: []string{"status", "objective", "progress", "epic", "linear", "branch", "commit", "mode", "activeAgent",
				"summary", "nextSteps", "startedAt", "updatedAt", "endedAt", "note"}}, true
	case LabelTask:
		return Schema{Key: []string{"project", "taskId"},
			Props: []string{"name", "status", "priority", "phase", "iteration", "score", "updatedAt", "note"}}, true
	case LabelUpdate:
		return Schema{Key: []string{"project", "sessionId", "updateId"},
			Props: []string{"type", "message", "progress", "tags", "timestamp"}}, true
	}
	return Schema{}, false
}

// Node is one node: its label, its key values (in the order of the label's
// Schema.Key) and its other properties. A property value is a string, an
// int, a float64, a bool or a []string; a property without a value is left
// out of Props.
type Node struct {
	Label string
	Key   []string
	Props map[string]any
}

// ID is the node's id in the JSON export and in Edge: the label, a colon and
// the key values joined by "/" ("Session:demo/2026-11-20-session-01"), with
// "%" and "/" inside a value written %25 and %2F, so that no two nodes share
// an id.
func (n *Node) ID() string { return nodeID(n.Label, n.Key) }

func nodeID(label string, key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = strings.NewReplacer("%", "%25", "/", "%2F").Replace(k)
	}
	return label + ":" + strings.Join(parts, "/")
}

// KeyProps returns the node's key as properties: name to value.
func (n *Node) KeyProps() map[string]string {
	s, _ := SchemaOf(n.Label)
	out := make(map[string]string, len(s.Key))
	for i, k := range s.Key {
		out[k] = n.Key[i]
	}
	return out
}

// set sets property name to v, or removes it when v holds no value (an
// empty string or list, a nil pointer, a zero time, a NaN or infinite
// float). Times are written as ISO 8601 strings in UTC.
func (n *Node) set(name string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			v = nil
		}
	case []string:
		if len(x) == 0 {
			v = nil
		} else {
			v = slices.Clone(x)
		}
	case *int:
		if x == nil {
			v = nil
		} else {
			v = *x
		}
	case *float64:
		if x == nil {
			v = nil
		} else {
			v = *x
		}
	case time.Time:
		if x.IsZero() {
			v = nil
		} else {
			v = note.FormatTime(x)
		}
	case *time.Time:
		if x == nil || x.IsZero() {
			v = nil
		} else {
			v = note.FormatTime(*x)
		}
	}
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		v = nil
	}
	if v == nil {
		delete(n.Props, name)
		return
	}
	n.Props[name] = v
}

// setDefault sets name to v unless the node already has a value for it.
func (n *Node) setDefault(name string, v any) {
	if _, ok := n.Props[name]; !ok {
		n.set(name, v)
	}
}

// Edge is one relationship: its type and the ids (Node.ID) of its ends.
type Edge struct {
	Type string
	From string
	To   string
}

// Graph is a set of nodes, one per label and key, and of edges, one per
// type and ends. Build makes one from a vault.
type Graph struct {
	nodes map[string]*Node
	edges map[Edge]bool
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{nodes: map[string]*Node{}, edges: map[Edge]bool{}}
}

// node returns the node of label with key, adding it when it is new.
func (g *Graph) node(label string, key ...string) *Node {
	id := nodeID(label, key)
	if n, ok := g.nodes[id]; ok {
		return n
	}
	n := &Node{Label: label, Key: key, Props: map[string]any{}}
	g.nodes[id] = n
	return n
}

// link records the edge typ from one node id to another. An edge whose end
// never becomes a node (a link to a task with no note, say) is left out of
// Edges.
func (g *Graph) link(typ, from, to string) {
	g.edges[Edge{Type: typ, From: from, To: to}] = true
}

// Node returns the node with id.
func (g *Graph) Node(id string) (*Node, bool) {
	n, ok := g.nodes[id]
	return n, ok
}

// Nodes returns the nodes sorted by label, then by key, value by value, runs
// of digits by their number (u-2 before u-10).
func (g *Graph) Nodes() []*Node {
	out := make([]*Node, 0, len(g.nodes))
	for _, n := range g.nodes {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *Node) int {
		if c := strings.Compare(a.Label, b.Label); c != 0 {
			return c
		}
		for i := 0; i < len(a.Key) && i < len(b.Key); i++ {
			if c := naturalCompare(a.Key[i], b.Key[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.Key), len(b.Key))
	})
	return out
}

// Edges returns the edges whose two ends are nodes of the graph, sorted by
// type, then by the ids of their ends.
func (g *Graph) Edges() []Edge {
	out := make([]Edge, 0, len(g.edges))
	for e := range g.edges {
		_, from := g.nodes[e.From]
		_, to := g.nodes[e.To]
		if from && to {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.From, b.From), strings.Compare(a.To, b.To))
	})
	return out
}

// naturalCompare compares a and b as text, except that runs of ASCII digits
// compare by their number (leading zeros aside), so "u-2" < "u-10"; two
// strings equal that way compare as text.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			x, y := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Or(cmp.Compare(len(x), len(y)), strings.Compare(x, y)); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i, j = i+1, j+1
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), strings.Compare(a, b))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
