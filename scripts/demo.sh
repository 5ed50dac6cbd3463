#!/usr/bin/env bash
# The main job on the example vault: copy vault-example/ to a temporary
# folder, make it a vault, and run a whole session lifecycle on it, printing
# status and log; on the way, its task graph, and a checkpoint, a change and
# a rollback checked against the checkpoint's tag.
# Usage: scripts/demo.sh [path/to/sessionvault]; KEEP=1 keeps the vault (its
# path is printed at the end, to open in Obsidian).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$root" && realpath "${1:-bin/sessionvault}")"
work="$(mktemp -d)"
if [ "${KEEP:-}" = 1 ]; then
  trap 'echo; echo "The demo vault is kept at $work/vault: in Obsidian, Open folder as vault and pick it."' EXIT
else
  trap 'rm -rf "$work"; echo; echo "(make demo KEEP=1 keeps the vault, to open in Obsidian)"' EXIT
fi
cp -R "$root/vault-example" "$work/vault"
export SESSIONVAULT_VAULT="$work/vault"
sv() { echo "\$ sessionvault $*"; "$bin" "$@"; echo; }

sv init "$work/vault" --project demo
# The code repository the sessions work in: the engine checks the branch and
# sees the commits made there (the checklists' evidence), from its folder.
code="$work/code"
git init -q -b main "$code"
git -C "$code" commit -q --allow-empty -m "first commit"
git -C "$code" switch -q -c demo-work
cd "$code"
sv status
# The example's active session was last seen long ago: it is crashed.
# recovery check prints its resume prompt (its task's immediate context).
sv recovery check
sv recover
# The example's task graph (demo/tasks/*.md, linked by depends_on and blocks):
# two tasks completed, two ready, one blocked, one waiting on it.
sv task graph --include-completed
sv task show account-linking-dialog
# Checkpoints are git tags. The example was copied without .git, so the
# checkpoints its demo/checkpoints.md lists (tags of the vault that made it)
# are not in this copy: checkpoint list, which reads the tags, starts empty.
sv checkpoint list
# A checkpoint, a change, and a rollback to the checkpoint.
cp=$("$bin" checkpoint create "Before the demo's change" --task account-linking-dialog)
echo "\$ sessionvault checkpoint create ... -> $cp"
sv task update account-linking-dialog --status in_progress --next-step "Build the dialog without the mock-up" --summary "a change to roll back"
sv task show account-linking-dialog --no-relationships
sv rollback --checkpoint "$cp"
sv task show account-linking-dialog --no-relationships
echo "\$ git diff --exit-code checkpoint/$cp HEAD -- demo/tasks/account-linking-dialog.md   (no output: the note is as the checkpoint has it)"
git -C "$work/vault" diff --exit-code "checkpoint/$cp" HEAD -- demo/tasks/account-linking-dialog.md
echo
sv task versions account-linking-dialog
# The checkpoint and the backup the rollback made of the state before it.
sv checkpoint list
echo "\$ git log --oneline -3; git tag -l 'checkpoint/*'"
git -C "$work/vault" log --oneline -3
git -C "$work/vault" tag -l 'checkpoint/*'
echo
sv update "Read the example session and its decisions" --progress 70 --tag demo
sv decide --title "Keep notes as the source of truth" --choice "Markdown notes in git" \
  --rationale "People edit them in Obsidian; git gives history and rollback" --alternative "SQLite" --impact high
blocker=$("$bin" block "Waiting for review of the README" --severity low)
echo "\$ sessionvault block ... -> $blocker"
sv resolve "$blocker" --resolution "Reviewed"
echo "# Notes" > NOTES.md && git add NOTES.md && git commit -q -m "Notes on the example"
echo "\$ git commit -m \"Notes on the example\"   (in $code: the end checklist's commit)"
sv end --summary "Finished the example session" --next "Wire the hooks into Claude Code"
sv start --objective "Show a second session" --branch demo/second --commit 0000000
sv update "Second session under way" --progress 10
sv status
sv log --limit 12
sv check
echo "git status --porcelain in the vault (empty means clean):"
git -C "$work/vault" status --porcelain
git -C "$work/vault" fsck --no-progress && echo "git fsck: clean"
