//go:build unix && !linux && !darwin

package vault

// Other Unix systems: no atomic swap nor exclusive rename is used (see
// exchange and renameNoReplace for the fallbacks).

func swapFiles(string, string) error { return errUnsupported }

func renameExclusive(string, string) error { return errUnsupported }
