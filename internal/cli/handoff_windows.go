//go:build windows

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// handOff runs bin with args on this process's streams, waits for it and
// takes its exit code (Windows cannot replace a running process). Ctrl-C
// and Ctrl-Break reach both processes on the console: this one takes them
// (signal.Notify keeps the default handler from ending it) and waits for
// bin, which stops on them.
func (a *app) handOff(bin string, args []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for range sigs { // bin has them too
		}
	}()
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
