package cli

import (
	"errors"
	"os"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// mergeDriverFormat is the merge driver's format check, before it merges
// the note name (its path, "" when git did not give it): when a side of
// the merge is in a format newer than this binary writes
// (vault.CheckMergeFormat) it is errs.VaultFormatNewer saying so and what
// to do, and the driver exits non-zero with the note left as git's
// conflict, merged by no rules of this binary's.
func mergeDriverFormat(name string) error {
	err := vault.CheckMergeFormat("", os.Environ())
	var e *errs.Error
	if err == nil || !errors.As(err, &e) {
		return nil
	}
	msg := e.Message + "; so this sessionvault did not merge the note"
	if name != "" {
		msg = name + ": " + msg + ", left in conflict"
	}
	msg += ": abort the merge (`git merge --abort`, or `git rebase --abort`), install a sessionvault release that writes that format, and merge again"
	return &errs.Error{Code: e.Code, Message: msg, Details: e.Details, Err: e.Err}
}
