#!/usr/bin/env bash
# The main job on the example vault: copy vault-example/ to a temporary
# folder, make it a vault, and run a whole session lifecycle on it, printing
# status and log. Usage: scripts/demo.sh [path/to/sessionvault]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$root" && realpath "${1:-bin/sessionvault}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -R "$root/vault-example" "$work/vault"
export SESSIONVAULT_VAULT="$work/vault"
sv() { echo "\$ sessionvault $*"; "$bin" "$@"; echo; }

sv init "$work/vault" --project demo
sv status
# The example's active session was last seen long ago: it is crashed.
sv recover
sv update "Read the example session and its decisions" --progress 70 --tag demo
sv decide --title "Keep notes as the source of truth" --choice "Markdown notes in git" \
  --rationale "People edit them in Obsidian; git gives history and rollback" --alternative "SQLite" --impact high
blocker=$("$bin" block "Waiting for review of the README" --severity low)
echo "\$ sessionvault block ... -> $blocker"
sv resolve "$blocker" --resolution "Reviewed"
sv end --summary "Finished the example session" --next "Wire the hooks into Claude Code"
sv start --objective "Show a second session" --branch demo/second --commit 0000000
sv update "Second session under way" --progress 10
sv status
sv log --limit 12
sv check
echo "git status --porcelain in the vault (empty means clean):"
git -C "$work/vault" status --porcelain
git -C "$work/vault" fsck --no-progress && echo "git fsck: clean"
