package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/linear"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/syncer"
)

// linearSync returns a function running one Linear sync of the project.
func (a *app) linearSync(svc *session.Service, project string, dry bool, only string) (func(ctx context.Context) (syncer.Summary, error), error) {
	client, err := linear.FromEnv()
	if err != nil {
		return nil, errs.Wrap(errs.ConfigInvalid, err, "the Linear sync")
	}
	cfg := svc.V.Config.Linear
	store := syncer.JSONStore{
		Read:  func() ([]byte, error) { return svc.V.ReadState("linear-ledger.json") },
		Write: func(b []byte) error { return svc.V.WriteStateDurable("linear-ledger.json", b) },
	}
	opts := syncer.Options{StateOnStart: cfg.StateOnStart, StateOnEnd: cfg.StateOnEnd, DecisionLabel: cfg.DecisionLabel, DryRun: dry, Session: only}
	if cfg.NoteURL != "" {
		opts.NoteURL = func(project, id string) string {
			return cfg.NoteURL + project + "/" + session.SessionsDir + "/" + id + ".md"
		}
	}
	target := linear.NewTarget(client)
	return func(ctx context.Context) (syncer.Summary, error) {
		states, err := svc.Sessions(project)
		if err != nil {
			return syncer.Summary{}, err
		}
		return syncer.Run(ctx, target, store, project, states, opts)
	}, nil
}

// linearUnreachable is the error of a Linear that cannot be reached over
// the network (syncer.Unreachable): errs.NetworkUnavailable, saying what
// came of the command (done) and what to check.
func linearUnreachable(err error, done string) error {
	endpoint := strings.TrimSpace(os.Getenv(linear.EnvAPIURL))
	if endpoint == "" {
		endpoint = linear.DefaultEndpoint
	}
	return errs.Wrap(errs.NetworkUnavailable, err, "Linear ("+endpoint+") cannot be reached: "+done+"; check the network connection (and "+linear.EnvAPIURL+" if it is set)")
}

func (a *app) syncCommand() *cobra.Command {
	c := &cobra.Command{Use: "sync linear", Short: "Push sessions to a sync target"}
	var dry bool
	var only string
	lin := &cobra.Command{
		Use:   "linear [--dry-run] [--session ID]",
		Short: "One run of the Linear sync: push what changed since the last push",
		Long: `Pushes each session linked to a Linear issue (start --linear ENG-123, or a branch
name containing the key) as one comment on the issue, created once with an id
chosen by sessionvault and then kept current; plus the issue state, decision
label and note link the config maps. A ledger in .sessionvault/state makes a
re-run send only what changed. A rate limit stops the run cleanly; the next run
resumes. The key comes from LINEAR_API_KEY; the endpoint from LINEAR_API_URL.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			run, err := a.linearSync(svc, project, dry, only)
			if err != nil {
				return err
			}
			sum, err := run(c.Context())
			if err != nil {
				if errors.Is(err, syncer.ErrAuth) {
					return errs.Wrap(errs.ConfigInvalid, err, "Linear refused the key")
				}
				if syncer.Unreachable(err) {
					return linearUnreachable(err, "the Linear sync stopped; what it did not send, the next run sends")
				}
				return errs.Wrap(errs.GitWriteFailed, err, "the Linear sync")
			}
			text := "linear: " + sum.String()
			for _, p := range sum.Planned {
				text += "\n  would send: " + p
			}
			for _, e := range sum.Errors {
				text += "\n  failed: " + e
			}
			return a.emit(sum, text)
		},
	}
	lin.Flags().BoolVar(&dry, "dry-run", false, "print the operations without sending them")
	lin.Flags().StringVar(&only, "session", "", "sync only this session")
	c.AddCommand(lin)
	return c
}

func (a *app) linearCommand() *cobra.Command {
	c := &cobra.Command{Use: "linear check", Short: "Linear helpers"}
	c.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Test LINEAR_API_KEY: ask Linear who the key belongs to",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			client, err := linear.FromEnv()
			if err != nil {
				return errs.Wrap(errs.ConfigInvalid, err, "linear check")
			}
			ctx, cancel := context.WithTimeout(c.Context(), 20*time.Second)
			defer cancel()
			name, email, err := client.Viewer(ctx)
			if err != nil {
				if syncer.Unreachable(err) {
					return linearUnreachable(err, "linear check: the key was not tested")
				}
				return errs.Wrap(errs.ConfigInvalid, err, "linear check")
			}
			return a.emit(map[string]string{"name": name, "email": email}, "LINEAR_API_KEY works: "+name+" <"+email+">")
		},
	})
	return c
}
