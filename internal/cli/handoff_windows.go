//go:build windows

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// handOff runs bin with args on this process's streams, waits for it and
// takes its exit code (Windows cannot replace a running process). Ctrl-C
// reaches both processes on the console: this one ignores it and waits for
// bin, which stops on it.
func (a *app) handOff(bin string, args []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		a.exit = exit.ExitCode()
		return nil
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", bin, err)
	}
	return nil
}
