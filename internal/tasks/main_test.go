package tasks

import (
	"os"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// TestMain runs the tests with their vaults in memory (testenv.Run).
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
