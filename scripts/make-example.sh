#!/usr/bin/env bash
# Regenerates vault-example/ with the sessionvault binary: a finished session
# with decisions and a resolved blocker, an active session with an open
# blocker, and a person's edits (ticked checklist items, a section of their
# own). Usage: scripts/make-example.sh [path/to/sessionvault]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
SV="$(realpath "${1:-$root/bin/sessionvault}")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export SESSIONVAULT_VAULT="$work/v"
at() { export SESSIONVAULT_NOW="$1"; shift; "$SV" "$@" >/dev/null; }
"$SV" init "$work/v" --project demo >/dev/null
at 2026-11-20T09:02:11Z start --objective "Add OAuth login to the web app" --epic auth --linear ENG-142 --branch feat/eng-142-oauth --commit 4f1c2ab
at 2026-11-20T09:40:05Z update "Read the auth module and the session middleware" --progress 10 --tag auth
at 2026-11-20T10:15:42Z decide --title "Use PKCE for the OAuth flow" --choice "Authorization code flow with PKCE" --rationale "The SPA cannot keep a client secret; PKCE is the current recommendation" --alternative "Implicit flow" --alternative "Backend-for-frontend proxy" --impact high --category security
at 2026-11-20T10:51:30Z update "Callback handler and token exchange written, unit tests pass" --progress 45 --tag auth
at 2026-11-20T11:20:00Z block "Staging identity provider rejects the redirect URI" --severity high
at 2026-11-20T12:05:17Z resolve b-1 --resolution "Registered https://staging.example.com/callback with the provider"
at 2026-11-20T12:31:48Z decide --title "Store tokens in memory only" --choice "Keep access tokens in memory, refresh via httpOnly cookie" --rationale "Avoids token theft through XSS in localStorage" --alternative "localStorage" --impact medium --category security
at 2026-11-20T13:10:02Z update "Login, logout and refresh work end to end on staging" --progress 80 --type milestone
at 2026-11-20T13:22:40Z end --summary "OAuth login with PKCE works on staging; tokens kept in memory" --next "Add the account-linking screen" --next "Write the ADR for token storage"
at 2026-11-21T08:45:00Z start --objective "Account-linking screen for existing users" --epic auth --linear ENG-150 --branch feat/eng-150-linking --commit 9a7e03d
at 2026-11-21T09:12:33Z update "Sketched the linking flow; reuses the PKCE callback" --progress 15
at 2026-11-21T09:50:10Z decide --title "Link accounts by verified email" --choice "Match on verified email, then ask the user to confirm" --rationale "Avoids silent takeover of accounts with unverified emails" --impact high --category security
at 2026-11-21T10:20:55Z block "Design for the confirm dialog is not ready" --severity medium
at 2026-11-21T10:31:00Z update "Backend endpoint for linking done; waiting on design for the dialog" --progress 35
# A person's edits in Obsidian: two start items ticked, a section of their own.
cur="$work/v/demo/session-current-state.md"
sed -i '0,/- \[ \] \*\*MUST\*\*/s//- [x] **MUST**/' "$cur"
sed -i '0,/- \[ \] \*\*MUST\*\*/s//- [x] **MUST**/' "$cur"
printf '\n## Notes from Ana\n\nThe design team promised the dialog mock-up for Monday. Ping @lee if it slips.\n' >> "$cur"
rm -rf "$root/vault-example"
mkdir -p "$root/vault-example"
(cd "$work/v" && tar --exclude=./.git --exclude=./.sessionvault/state -cf - .) | (cd "$root/vault-example" && tar -xf -)
echo "vault-example/ regenerated"
