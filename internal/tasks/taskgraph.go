package tasks

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// TaskNode is a task in the graph (a node of get_task_graph's result).
type TaskNode struct {
	TaskID   string   `json:"task_id"`
	Name     string   `json:"name"`
	Status   string   `json:"status"`
	Phase    string   `json:"phase,omitempty"`
	Priority int      `json:"priority"`
	Score    *float64 `json:"score,omitempty"`
}

// TaskEdge is a typed relation: blocks, depends_on, related_to (from the
// notes' properties), child_of (parent).
type TaskEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Type string `json:"type"`
}

// TaskFocus is one task's neighbourhood, inverse relations derived.
type TaskFocus struct {
	Task         TaskNode   `json:"task"`
	BlockedBy    []TaskNode `json:"blocked_by"`
	Blocks       []TaskNode `json:"blocks"`
	DependsOn    []TaskNode `json:"depends_on"`
	DependencyOf []TaskNode `json:"dependency_of"`
	RelatedTo    []TaskNode `json:"related_to"`
}

// TaskGraph is the task graph: its nodes once each, and which of them are
// ready and which blocked by task id (in the nodes' order), so that a graph
// of 1,000 tasks is read once, not twice: about 60 KB of JSON, not 120.
type TaskGraph struct {
	Nodes        []TaskNode       `json:"nodes"`
	Edges        []TaskEdge       `json:"edges"`
	Focus        *TaskFocus       `json:"focus,omitempty"`
	ReadyTasks   []string         `json:"ready_tasks"`   // ids of nodes
	BlockedTasks []string         `json:"blocked_tasks"` // ids of nodes
	Summary      TaskGraphSummary `json:"summary"`
}

// TaskGraphSummary counts the tasks by status (all tasks, whatever the
// filters).
type TaskGraphSummary struct {
	TotalTasks int `json:"total_tasks"`
	InProgress int `json:"in_progress"`
	Blocked    int `json:"blocked"`
	Completed  int `json:"completed"`
	Pending    int `json:"pending"`
}

// GraphOptions are the inputs of TaskGraphOf.
type GraphOptions struct {
	Project          string
	TaskID           string // "" = the whole graph
	Depth            int    // default 2 (with TaskID)
	IncludeCompleted bool
}

// node is t's node in the graph, sharing nothing with t.
func node(t Task) TaskNode {
	n := TaskNode{TaskID: t.ID, Name: t.Name, Status: t.Status, Phase: t.Phase, Priority: t.Priority}
	if t.Score != nil {
		v := *t.Score
		n.Score = &v
	}
	return n
}

// TaskGraphOf builds the task graph from the task notes' wikilinks. A task
// is ready when it is pending or in progress and every task it depends on
// or is blocked by is completed; blocked when its status is blocked or one
// of those is not. A cycle of depends_on/blocks is errs.TaskGraphCycle
// naming it. Completed and archived tasks are left out unless
// IncludeCompleted (they still count in the summary and for readiness).
func (s *Service) TaskGraphOf(o GraphOptions) (TaskGraph, error) {
	project, err := s.Project(o.Project)
	if err != nil {
		return TaskGraph{}, err
	}
	r, err := s.readTaskNotes(project)
	if err != nil {
		return TaskGraph{}, err
	}
	return s.graphOf(project, r.tasks(), o)
}

// graphKey is what a task graph is built from besides the tasks: the
// project and the options (Depth as it is used).
type graphKey struct {
	project, taskID  string
	depth            int
	includeCompleted bool
}

// maxGraphs bounds the graphs a TaskCache keeps for one generation of its
// notes: the last ones asked for, whatever their options.
const maxGraphs = 8

// TaskGraphJSON returns TaskGraphOf's graph as JSON (json.Marshal). Through
// a task cache (WithCache), the JSON made when every note was found as the
// cache held it (from the call after the one that read them) is kept with
// the cache, and returned again, the same bytes, as long as no task note
// changes: every note is still checked, as TaskGraphOf checks it, but the
// graph is neither built nor encoded again. The caller must not modify the
// bytes.
func (s *Service) TaskGraphJSON(o GraphOptions) ([]byte, error) {
	project, err := s.Project(o.Project)
	if err != nil {
		return nil, err
	}
	r, err := s.readTaskNotes(project)
	if err != nil {
		return nil, err
	}
	key := graphKey{project: project, taskID: o.TaskID, includeCompleted: o.IncludeCompleted}
	if o.TaskID != "" {
		key.depth = max(o.Depth, 0)
		if key.depth == 0 {
			key.depth = 2
		}
	}
	if r.stable {
		if data, ok := s.cache.graph(r.gen, key); ok {
			return data, nil
		}
	}
	g, err := s.graphOf(project, r.tasks(), o)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	if r.stable {
		s.cache.keepGraph(r.gen, key, data)
	}
	return data, nil
}

// graph returns the graph kept for key at generation gen of c's notes.
func (c *TaskCache) graph(gen uint64, key graphKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.graphs[key]
	return data, ok && c.graphGen == gen
}

// keepGraph keeps data, the graph of key built at generation gen of c's
// notes, in place of the graphs of older generations.
func (c *TaskCache) keepGraph(gen uint64, key graphKey, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case gen < c.graphGen:
		return
	case gen > c.graphGen || c.graphs == nil || len(c.graphs) >= maxGraphs:
		c.graphGen, c.graphs = gen, map[graphKey][]byte{}
	}
	c.graphs[key] = data
}

// graphOf builds the task graph of project from its tasks, which it does
// not modify (they may share their lists with the cache: taskReading.tasks).
func (s *Service) graphOf(project string, tasks []Task, o GraphOptions) (TaskGraph, error) {
	if cyc := findCycle(tasks); cyc != nil {
		return TaskGraph{}, errs.New(errs.TaskGraphCycle, "the tasks' dependencies form a cycle: %s; remove one of its depends_on or blocks links", strings.Join(cyc, " → ")).With("cycle", cyc)
	}
	set := newTaskSet(tasks)
	byID := set.byID
	g := TaskGraph{Nodes: []TaskNode{}, Edges: []TaskEdge{}, ReadyTasks: []string{}, BlockedTasks: []string{}}
	for _, t := range tasks {
		g.Summary.TotalTasks++
		switch t.Status {
		case session.TaskInProgress:
			g.Summary.InProgress++
		case session.TaskBlocked:
			g.Summary.Blocked++
		case session.TaskCompleted:
			g.Summary.Completed++
		case session.TaskPending:
			g.Summary.Pending++
		}
	}
	keep := map[string]bool{}
	for _, t := range tasks {
		keep[t.ID] = o.IncludeCompleted || t.Active()
	}
	if o.TaskID != "" {
		if _, ok := byID[o.TaskID]; !ok {
			return TaskGraph{}, s.TaskNotFound(errs.TaskNotFound, project, o.TaskID)
		}
		depth := o.Depth
		if depth <= 0 {
			depth = 2
		}
		near := neighbourhood(tasks, o.TaskID, depth)
		for id := range keep {
			keep[id] = keep[id] && near[id] || id == o.TaskID
		}
	}
	for _, t := range tasks {
		if !keep[t.ID] {
			continue
		}
		g.Nodes = append(g.Nodes, node(t))
		edge := func(to, typ string) {
			if _, ok := byID[to]; ok && keep[to] {
				g.Edges = append(g.Edges, TaskEdge{From: t.ID, To: to, Type: typ})
			}
		}
		for _, to := range t.Blocks {
			edge(to, "blocks")
		}
		for _, to := range t.DependsOn {
			edge(to, "depends_on")
		}
		for _, to := range t.RelatedTo {
			edge(to, "related_to")
		}
		if t.Parent != "" {
			edge(t.Parent, "child_of")
		}
		if !t.Active() {
			continue
		}
		if t.Status == session.TaskBlocked || set.hasOpenBlocker(t) {
			g.BlockedTasks = append(g.BlockedTasks, t.ID)
		} else {
			g.ReadyTasks = append(g.ReadyTasks, t.ID)
		}
	}
	if o.TaskID != "" {
		t := byID[o.TaskID]
		f := &TaskFocus{Task: node(t), BlockedBy: []TaskNode{}, Blocks: []TaskNode{}, DependsOn: []TaskNode{}, DependencyOf: []TaskNode{}, RelatedTo: []TaskNode{}}
		for _, id := range t.Blocks {
			if x, ok := byID[id]; ok {
				f.Blocks = append(f.Blocks, node(x))
			}
		}
		for _, id := range t.DependsOn {
			if x, ok := byID[id]; ok {
				f.DependsOn = append(f.DependsOn, node(x))
			}
		}
		for _, id := range t.RelatedTo {
			if x, ok := byID[id]; ok {
				f.RelatedTo = append(f.RelatedTo, node(x))
			}
		}
		for _, id := range set.blockedBy[t.ID] {
			f.BlockedBy = append(f.BlockedBy, node(byID[id]))
		}
		for _, x := range tasks {
			if slices.Contains(x.DependsOn, t.ID) {
				f.DependencyOf = append(f.DependencyOf, node(x))
			}
		}
		g.Focus = f
	}
	return g, nil
}

// neighbourhood returns the tasks within depth links of id, any relation
// in either direction.
func neighbourhood(tasks []Task, id string, depth int) map[string]bool {
	adj := map[string][]string{}
	link := func(a, b string) { adj[a] = append(adj[a], b); adj[b] = append(adj[b], a) }
	for _, t := range tasks {
		for _, list := range [][]string{t.Blocks, t.DependsOn, t.RelatedTo, session.NonEmpty(t.Parent)} {
			for _, o := range list {
				link(t.ID, o)
			}
		}
	}
	seen := map[string]bool{id: true}
	frontier := []string{id}
	for d := 0; d < depth && len(frontier) > 0; d++ {
		var next []string
		for _, f := range frontier {
			for _, n := range adj[f] {
				if !seen[n] {
					seen[n] = true
					next = append(next, n)
				}
			}
		}
		frontier = next
	}
	return seen
}

// findCycle returns a cycle of "must finish first" relations (A depends_on
// B: B first; A blocks B: A first) as the ids along it, first repeated at
// the end, or nil. The search starts from the smallest id, so the same
// notes always name the same cycle.
func findCycle(tasks []Task) []string {
	after := map[string][]string{} // id -> tasks that must finish before it
	ids := make([]string, 0, len(tasks))
	for _, t := range tasks {
		ids = append(ids, t.ID)
		after[t.ID] = append(after[t.ID], t.DependsOn...)
		for _, b := range t.Blocks {
			after[b] = append(after[b], t.ID)
		}
	}
	sort.Strings(ids)
	const white, grey, black = 0, 1, 2
	colour := map[string]int{}
	var stack []string
	var cycle []string
	var visit func(id string) bool
	visit = func(id string) bool {
		colour[id] = grey
		stack = append(stack, id)
		for _, n := range after[id] {
			switch colour[n] {
			case grey:
				for i, x := range stack {
					if x == n {
						cycle = append(append([]string(nil), stack[i:]...), n)
						return true
					}
				}
			case white:
				if visit(n) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		colour[id] = black
		return false
	}
	for _, id := range ids {
		if colour[id] == white && visit(id) {
			return cycle
		}
	}
	return nil
}
