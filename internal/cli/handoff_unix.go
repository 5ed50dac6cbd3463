//go:build !windows

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// handOff replaces this process with bin run with args (execve): the same
// process id, streams and signals, so a service manager or a shell's job
// control sees the daemon itself. It returns only when bin cannot be run.
func (a *app) handOff(bin string, args []string) error {
	err := syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
	return fmt.Errorf("running %s: %w", bin, err)
}
