package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/graph"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/shellquote"
)

// exportCommand is `export`: the vault written out for other tools.
func (a *app) exportCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "export",
		Short: "Write the vault out for other tools (a graph as Cypher or JSON, the .ai-session layout)",
		Long: `export writes what the vault holds in a form other tools read. It only reads
the vault: no note changes and no commit is made.`,
	}
	c.AddCommand(a.exportCypherCommand())
	c.AddCommand(a.exportJSONCommand())
	c.AddCommand(a.exportAISessionCommand())
	return c
}

const exportGraphHelp = `The graph (sessions and their entries, the task graph) has these nodes, each
with a stable key:

  Session  {project, sessionId}            the current session and every archived one
  Update   {project, sessionId, updateId}  a session's updates (u-N)
  Decision {decisionId}                    the decision note's path, e.g. demo/decisions/2026-11-20-use-pkce
  Blocker  {project, sessionId, blockerId} a session's blockers (b-N)
  Task     {project, taskId}               tasks/<task-id>.md
  Feature  {project, featureId}            features/<feature-id>.md (feature_id, name, status, started_at, last_active)
  Agent    {name}                          decided_by, approved_by, rejected_by of decision notes;
                                           active_agent and agents of session notes

and relationships (Session)-[:CONTINUES]->(Session), -[:HAS_UPDATE]->(Update),
-[:MADE_DECISION]->(Decision), -[:ENCOUNTERED]->(Blocker), -[:WORKS_ON]->(Task)
(the active task), -[:INVOKED]->(Agent); (Decision)-[:RESOLVED]->(Blocker) (the
blocker's resolution links the decision's note); (Task)-[:BLOCKS|DEPENDS_ON|
RELATED_TO|CHILD_OF]->(Task); (Feature)-[:HAS_TASK]->(Task);
(Agent)-[:DECIDED|APPROVED|REJECTED]->(Decision). Properties are camelCase;
times are ISO 8601 strings in UTC.

Every project of the vault is exported unless --project names one. The output
goes to stdout, or to --output FILE (written whole or not at all). The same
vault always gives the same bytes.`

func (a *app) exportCypherCommand() *cobra.Command {
	var output string
	var constraints bool
	c := &cobra.Command{
		Use:   "cypher",
		Short: "Write the vault's graph as idempotent Cypher for Neo4j (MERGE on stable keys)",
		Long: `export cypher writes the vault's sessions, updates, decisions, blockers, tasks,
features and agents as Cypher statements, one per line. Every node is a MERGE
on its key followed by SET of its other properties, and every relationship a
MERGE between two matched nodes; there is no CREATE. Loading the file again
(after more work in the vault, say) updates the graph and never duplicates a
node or a relationship.

Load it into Neo4j with cypher-shell:

  sessionvault export cypher --output export.cypher
  cypher-shell -a neo4j://localhost:7687 -u neo4j -p PASSWORD -f export.cypher

For a large vault, add --constraints (Neo4j 5): the file then starts with a
uniqueness constraint per label (CREATE CONSTRAINT ... IF NOT EXISTS), which
indexes the keys each MERGE looks up. The header of the file lists them as
comments either way.

` + exportGraphHelp,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			g, err := a.exportGraph()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := graph.WriteCypher(&buf, g, graph.CypherOptions{Constraints: constraints}); err != nil {
				return err
			}
			return a.writeExport("cypher", output, buf.Bytes(), g, func() any { return map[string]any{"cypher": buf.String()} },
				"load it with: cypher-shell -f "+shellquote.Quote(output))
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	c.Flags().BoolVar(&constraints, "constraints", false, "start with a uniqueness constraint per label (Neo4j 5 CREATE CONSTRAINT ... IF NOT EXISTS)")
	return c
}

func (a *app) exportJSONCommand() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "json",
		Short: "Write the vault's graph as JSON: {\"nodes\":[...],\"edges\":[...]}",
		Long: `export json writes the vault's graph for tools other than Neo4j:

  {"nodes": [{"id": "Session:demo/2026-11-20-session-01", "label": "Session",
              "properties": {"project": "demo", "sessionId": "2026-11-20-session-01", ...}}, ...],
   "edges": [{"from": "Session:demo/2026-11-20-session-01", "to": "Task:demo/token-storage",
              "type": "WORKS_ON", "properties": {}}, ...]}

A node's id is its label, a colon and its key values joined by "/"; its
properties include the key. Every edge's ends are nodes of the file. Nodes
are sorted by label and key, edges by type and ends.

With --json (and no --output) the document is the "data" of the usual
{"success":true,"data":...} result.

` + exportGraphHelp,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			g, err := a.exportGraph()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := graph.WriteJSON(&buf, g); err != nil {
				return err
			}
			return a.writeExport("json", output, buf.Bytes(), g, func() any { return graph.DocumentOf(g) }, "")
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	return c
}

// exportGraph builds the graph of --project, or of every project of the
// vault. An unknown project is errs.ProjectNotFound naming the vault's
// projects and a command that exports one of them.
func (a *app) exportGraph() (*graph.Graph, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	projects, err := svc.Projects()
	if err != nil {
		return nil, err
	}
	if a.project != "" {
		if !slices.Contains(projects, a.project) {
			// The remedies name the vault and no project but the one they
			// give (an export without --project is every project).
			vaultOnly := guard.Place{Root: svc.V.Root}
			if len(projects) == 0 {
				return nil, errs.New(errs.ProjectNotFound, "project %q is not in the vault, which has no project yet; make one with `%s`", a.project, vaultOnly.Command("init --project "+shellquote.Quote(a.project))).With("project", a.project)
			}
			return nil, errs.New(errs.ProjectNotFound, "project %q is not in the vault (its projects: %s); export one with `%s`, or every one by leaving --project out", a.project, strings.Join(projects, ", "), vaultOnly.Command("export cypher --project "+shellquote.Quote(projects[0]))).With("project", a.project).With("projects", projects)
		}
		projects = []string{a.project}
	}
	return graph.Build(svc, projects)
}

// writeExport puts an export where it was asked for: on stdout (with --json,
// data() as the result's data), or in the file output, replaced whole, then
// reporting what it wrote (and hint, when given).
func (a *app) writeExport(format, output string, content []byte, g *graph.Graph, data func() any, hint string) error {
	nodes, edges := len(g.Nodes()), len(g.Edges())
	if output == "" {
		if a.jsonOut {
			return a.emit(data(), "")
		}
		_, err := a.stdout.Write(content)
		return err
	}
	if err := writeFileWhole(output, content); err != nil {
		return errs.New(errs.ExportWriteFailed, "cannot write --output %s: %v; name a file in a folder that exists and that you can write to", output, err).With("flag", "output").With("path", output)
	}
	text := fmt.Sprintf("wrote %d nodes and %d edges to %s", nodes, edges, output)
	if hint != "" {
		text += "; " + hint
	}
	return a.emit(map[string]any{"format": format, "output": output, "nodes": nodes, "edges": edges, "bytes": len(content)}, text)
}

// writeFileWhole replaces the file at name with content: written to a
// temporary file beside it, then renamed over it, so a reader never sees
// half an export and a failed export leaves the old file as it was.
func writeFileWhole(name string, content []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
