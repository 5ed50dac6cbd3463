package tasks

import (
	"slices"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// graphVault makes the tasks of the graph tests:
//
//	lexer    completed
//	parser   depends on lexer                          (ready: lexer is done)
//	codegen  depends on parser                         (blocked: parser is open)
//	docs     blocks codegen, related to and child of parser
//	infra    status blocked
//	old      archived, related to parser
func graphVault(t *testing.T) *Service {
	t.Helper()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "Lexer"})
	newTask(t, s, NewTaskOptions{Name: "Parser", DependsOn: []string{"lexer"}, Priority: 3})
	newTask(t, s, NewTaskOptions{Name: "Codegen", DependsOn: []string{"parser"}})
	newTask(t, s, NewTaskOptions{Name: "Docs", Blocks: []string{"codegen"}, RelatedTo: []string{"parser"}, Parent: "parser"})
	newTask(t, s, NewTaskOptions{Name: "Infra"})
	newTask(t, s, NewTaskOptions{Name: "Old", RelatedTo: []string{"parser"}})
	for id, status := range map[string]string{"lexer": session.TaskCompleted, "infra": session.TaskBlocked, "old": session.TaskArchived} {
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Status: strp(status)}}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func nodeIDs(ns []TaskNode) string {
	var out []string
	for _, n := range ns {
		out = append(out, n.TaskID)
	}
	return strings.Join(out, ",")
}

func edgeList(es []TaskEdge) string {
	var out []string
	for _, e := range es {
		out = append(out, e.From+" -"+e.Type+"-> "+e.To)
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// TestTaskGraph: the graph holds the open tasks and their typed edges
// (blocks, depends_on, related_to, child_of), the ready tasks (every task
// they wait for completed) and the blocked ones (status blocked, or an
// open task they wait for), and counts every task by status; completed and
// archived tasks join with IncludeCompleted.
func TestTaskGraph(t *testing.T) {
	t.Parallel()
	s := graphVault(t)
	g, err := s.TaskGraphOf(GraphOptions{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeIDs(g.Nodes); got != "codegen,docs,infra,parser" {
		t.Errorf("nodes = %s", got)
	}
	if got, want := edgeList(g.Edges), "codegen -depends_on-> parser; docs -blocks-> codegen; docs -child_of-> parser; docs -related_to-> parser"; got != want {
		t.Errorf("edges = %s\nwant    %s", got, want)
	}
	if got := strings.Join(g.ReadyTasks, ","); got != "docs,parser" {
		t.Errorf("ready = %s", got)
	}
	if got := strings.Join(g.BlockedTasks, ","); got != "codegen,infra" {
		t.Errorf("blocked = %s", got)
	}
	if g.Summary != (TaskGraphSummary{TotalTasks: 6, Blocked: 1, Completed: 1, Pending: 3}) {
		t.Errorf("summary = %+v", g.Summary)
	}
	if g.Focus != nil {
		t.Errorf("focus without a task: %+v", g.Focus)
	}
	for _, n := range g.Nodes {
		if n.TaskID == "parser" && (n.Name != "Parser" || n.Priority != 3 || n.Status != session.TaskPending) {
			t.Errorf("parser node = %+v", n)
		}
	}

	all, err := s.TaskGraphOf(GraphOptions{Project: "demo", IncludeCompleted: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeIDs(all.Nodes); got != "codegen,docs,infra,lexer,old,parser" {
		t.Errorf("all nodes = %s", got)
	}
	if got := edgeList(all.Edges); !strings.Contains(got, "parser -depends_on-> lexer") || !strings.Contains(got, "old -related_to-> parser") {
		t.Errorf("all edges = %s", got)
	}
	if got := strings.Join(all.ReadyTasks, ","); got != "docs,parser" {
		t.Errorf("ready with completed = %s", got)
	}
	if _, err := s.TaskGraphOf(GraphOptions{Project: "nope"}); !hasCode(err, errs.ProjectNotFound) {
		t.Errorf("a missing project: %v", err)
	}
}

// TestTaskGraphFocus: a graph around one task holds the tasks within depth
// links of it (either direction, default 2) and its neighbourhood with the
// inverse relations derived; a task that does not exist is TaskNotFound.
func TestTaskGraphFocus(t *testing.T) {
	t.Parallel()
	s := graphVault(t)
	for _, c := range []struct {
		o                                                     GraphOptions
		nodes                                                 string
		blockedBy, blocks, dependsOn, dependencyOf, relatedTo string
	}{
		{GraphOptions{TaskID: "parser", Depth: 1}, "codegen,docs,parser", "", "", "lexer", "codegen", ""},
		{GraphOptions{TaskID: "codegen", Depth: 1}, "codegen,docs,parser", "docs", "", "parser", "", ""},
		{GraphOptions{TaskID: "docs"}, "codegen,docs,parser", "", "codegen", "", "", "parser"},
		{GraphOptions{TaskID: "lexer", Depth: 1, IncludeCompleted: true}, "lexer,parser", "", "", "", "parser", ""},
		{GraphOptions{TaskID: "lexer", Depth: 2, IncludeCompleted: true}, "codegen,docs,lexer,old,parser", "", "", "", "parser", ""},
		{GraphOptions{TaskID: "lexer"}, "lexer,parser,codegen,docs", "", "", "", "parser", ""},
		{GraphOptions{TaskID: "infra", Depth: 5}, "infra", "", "", "", "", ""},
	} {
		c.o.Project = "demo"
		g, err := s.TaskGraphOf(c.o)
		if err != nil {
			t.Fatalf("%+v: %v", c.o, err)
		}
		nodes := strings.Split(nodeIDs(g.Nodes), ",")
		want := strings.Split(c.nodes, ",")
		slices.Sort(nodes)
		slices.Sort(want)
		f := g.Focus
		if !slices.Equal(nodes, want) || f == nil || f.Task.TaskID != c.o.TaskID || nodeIDs(f.BlockedBy) != c.blockedBy || nodeIDs(f.Blocks) != c.blocks ||
			nodeIDs(f.DependsOn) != c.dependsOn || nodeIDs(f.DependencyOf) != c.dependencyOf || nodeIDs(f.RelatedTo) != c.relatedTo {
			t.Errorf("focus %s depth %d: nodes %v (want %v), focus %+v", c.o.TaskID, c.o.Depth, nodes, want, f)
		}
	}
	if _, err := s.TaskGraphOf(GraphOptions{Project: "demo", TaskID: "nowhere"}); !hasCode(err, errs.TaskNotFound) {
		t.Errorf("a missing task: %v", err)
	}
}

// TestTaskGraphCycle: a cycle a person made by editing the notes is
// TaskGraphCycle naming the tasks along it, the same each time.
func TestTaskGraphCycle(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "Auth"})
	newTask(t, s, NewTaskOptions{Name: "Login", DependsOn: []string{"auth"}})
	editNote(t, s, "demo/tasks/auth.md", "depends_on: []", "depends_on:\n  - \"[[demo/tasks/login]]\"")
	for i := 0; i < 2; i++ {
		_, err := s.TaskGraphOf(GraphOptions{Project: "demo"})
		wantCode(t, err, errs.TaskGraphCycle)
		e := err.(*errs.Error)
		if !strings.Contains(e.Message, "auth → login → auth") || !slices.Equal(e.Details["cycle"].([]string), []string{"auth", "login", "auth"}) {
			t.Fatalf("cycle error %q %v", e.Message, e.Details)
		}
	}
}

// TestFindCycle: the cycles of "must finish first" relations — depends_on
// (the other first) and blocks (this one first), mixed or alone, of one
// task or several — are found from the smallest id; an order with no
// cycle is none.
func TestFindCycle(t *testing.T) {
	t.Parallel()
	task := func(id string, dependsOn, blocks []string) Task {
		return Task{ID: id, DependsOn: dependsOn, Blocks: blocks}
	}
	for _, c := range []struct {
		name  string
		tasks []Task
		want  []string
	}{
		{"no tasks", nil, nil},
		{"a chain", []Task{task("a", nil, nil), task("b", []string{"a"}, nil), task("c", []string{"b"}, []string{"d"}), task("d", nil, nil)}, nil},
		{"a diamond", []Task{task("a", nil, nil), task("b", []string{"a"}, nil), task("c", []string{"a"}, nil), task("d", []string{"b", "c"}, nil)}, nil},
		{"depends on itself", []Task{task("a", []string{"a"}, nil)}, []string{"a", "a"}},
		{"two depending on each other", []Task{task("b", []string{"a"}, nil), task("a", []string{"b"}, nil)}, []string{"a", "b", "a"}},
		{"blocks both ways", []Task{task("x", nil, []string{"y"}), task("y", nil, []string{"x"})}, []string{"x", "y", "x"}},
		{"blocks and depends on the same task", []Task{task("a", nil, nil), task("n", []string{"a"}, []string{"a"})}, []string{"a", "n", "a"}},
		{"a long ring", []Task{task("a", []string{"c"}, nil), task("b", []string{"a"}, nil), task("c", []string{"b"}, nil), task("d", []string{"a"}, nil)}, []string{"a", "c", "b", "a"}},
		{"a link to a task that does not exist", []Task{task("a", []string{"ghost"}, []string{"ghost2"})}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := findCycle(c.tasks); !slices.Equal(got, c.want) {
				t.Errorf("findCycle = %v, want %v", got, c.want)
			}
		})
	}
}
