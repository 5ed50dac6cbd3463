// Command sessionvault-daemon is sessionvault with the daemon built in:
// `sessionvault serve` runs it, with the same command line, for the
// scheduled Linear sync, the commits of a person's edits, crash marking,
// /healthz and Prometheus /metrics. Other commands run as in sessionvault.
// See `sessionvault serve --help`.
package main

import (
	"context"
	"os"

	"github.com/sessionvault/sessionvault/internal/cli"
	"github.com/sessionvault/sessionvault/internal/daemon"
)

func main() {
	os.Exit(cli.MainWith(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, cli.Options{Serve: serve}))
}

// serve runs the daemon on the job `serve` read until ctx ends.
func serve(ctx context.Context, job cli.ServeJob) error {
	d := &daemon.Daemon{
		Svc: job.Svc, Projects: []string{job.Project},
		Sync: job.LinearSync, Schedule: job.Schedule, Listen: job.Listen,
		RemoteSync: job.RemoteSync, RemoteSchedule: job.RemoteSchedule, RemoteDebounce: job.RemoteDebounce,
	}
	return d.Run(ctx)
}
