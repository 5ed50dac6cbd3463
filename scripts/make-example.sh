#!/usr/bin/env bash
# Regenerates vault-example/ with the sessionvault binary: a finished session
# with decisions and a resolved blocker, an active session with an open
# blocker, a task graph (two tasks completed, one ready, one in progress that
# was rolled back to a checkpoint, one blocked, one waiting on it), two
# checkpoints and a rollback's backup, and a person's edits (ticked checklist
# items, a section of their own, the global context's lists).
# Usage: scripts/make-example.sh [path/to/sessionvault]
#
# vault-example/ is copied without .git: the checkpoints listed in
# demo/checkpoints.md were tags of the vault made here, and a copy has none
# (`checkpoint list` reads the tags; scripts/demo.sh makes its own).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
SV="$(realpath "${1:-$root/bin/sessionvault}")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export SESSIONVAULT_VAULT="$work/v"
at() { export SESSIONVAULT_NOW="$1"; shift; "$SV" "$@" >/dev/null; }
out() { export SESSIONVAULT_NOW="$1"; shift; "$SV" "$@"; }
"$SV" init "$work/v" --project demo >/dev/null
# The machine the example's sessions ran on, not the host that regenerates it.
printf '{"name":"laptop","primary":true}' > "$work/v/.sessionvault/state/machine"
at 2026-11-20T09:02:11Z start --objective "Add OAuth login to the web app" --epic auth --linear ENG-142 --branch feat/eng-142-oauth --commit 4f1c2ab
at 2026-11-20T09:03:00Z task new "OAuth login with PKCE" --id oauth-pkce-login --priority 3 --key-file web/src/auth/pkce.ts --key-file web/src/auth/callback.ts --key-file server/auth/token.go
at 2026-11-20T09:03:30Z task new "Keep tokens out of reach of scripts" --id token-storage --priority 2 --depends-on oauth-pkce-login --key-file web/src/auth/session.ts --key-file server/auth/refresh.go
at 2026-11-20T09:04:00Z task switch oauth-pkce-login
at 2026-11-20T09:04:30Z feature new "OAuth login" --id oauth-login-2026-11-20 --description "Sign in with the company identity provider"
at 2026-11-20T09:05:00Z feature plan oauth-login-2026-11-20 --phase "Login flow" --phase-id login --task oauth-pkce-login --description "OAuth login with PKCE" --agent implementer --status in_progress
at 2026-11-20T09:05:10Z feature plan oauth-login-2026-11-20 --phase "Login flow" --task token-storage --description "Keep tokens out of reach of scripts" --agent implementer
at 2026-11-20T09:41:00Z history record --model opus --agent implementer --duration-ms 8120 -- go test ./server/auth/...
at 2026-11-20T10:50:00Z history record --model opus --agent implementer --duration-ms 15400 --status failure --error "TestCallback: redirect_uri mismatch" -- go test ./server/auth/...
at 2026-11-20T10:51:10Z history record --model opus --agent implementer --duration-ms 14980 -- go test ./server/auth/...
at 2026-11-20T09:40:05Z update "Read the auth module and the session middleware" --progress 10 --tag auth
at 2026-11-20T10:15:42Z decide --title "Use PKCE for the OAuth flow" --choice "Authorization code flow with PKCE" --rationale "The SPA cannot keep a client secret; PKCE is the current recommendation" --alternative "Implicit flow" --alternative "Backend-for-frontend proxy" --impact high --category security
at 2026-11-20T10:51:30Z update "Callback handler and token exchange written, unit tests pass" --progress 45 --tag auth
at 2026-11-20T10:52:00Z task update oauth-pkce-login --phase implement --iteration 1 --working-on "Callback handler and token exchange" \
  --last-action "Callback handler and token exchange written, unit tests pass" --next-step "Try the flow against the staging identity provider" \
  --decision "[[demo/decisions/2026-11-20-use-pkce-for-the-oauth-flow|Use PKCE for the OAuth flow]]" --summary "callback and token exchange written"
at 2026-11-20T11:20:00Z block "Staging identity provider rejects the redirect URI" --severity high
at 2026-11-20T11:21:00Z task update oauth-pkce-login --status blocked --blocker "Staging identity provider rejects the redirect URI" --summary "blocked on the staging redirect URI"
at 2026-11-20T12:05:17Z resolve b-1 --resolution "Registered https://staging.example.com/callback with the provider"
at 2026-11-20T12:06:00Z task update oauth-pkce-login --status in_progress --blocker '' --last-action "Registered the staging redirect URI" --next-step "Run login end to end on staging"
at 2026-11-20T12:31:48Z decide --title "Store tokens in memory only" --choice "Keep access tokens in memory, refresh via httpOnly cookie" --rationale "Avoids token theft through XSS in localStorage" --alternative "localStorage" --impact medium --category security
at 2026-11-20T12:32:30Z task update token-storage --decision "[[demo/decisions/2026-11-20-store-tokens-in-memory-only|Store tokens in memory only]]" --summary "decided: tokens in memory"
at 2026-11-20T13:10:02Z update "Login, logout and refresh work end to end on staging" --progress 80 --type milestone
at 2026-11-20T13:10:30Z feature plan oauth-login-2026-11-20 --task oauth-pkce-login --status completed --artifact web/src/auth/pkce.ts --artifact server/auth/token.go
at 2026-11-20T13:11:00Z task update oauth-pkce-login --status completed --phase done --last-action "Login and logout work end to end on staging" --next-step "" --summary "login works on staging"
at 2026-11-20T13:12:00Z task switch token-storage --from oauth-pkce-login --no-save
at 2026-11-20T13:18:00Z task update token-storage --status completed --phase done --iteration 1 --working-on "Refresh through an httpOnly cookie" \
  --last-action "Access token in memory, refresh via httpOnly cookie; refresh works on staging" --summary "tokens in memory, refresh via cookie"
at 2026-11-20T13:20:00Z task new "Write the ADR for token storage" --id adr-token-storage --priority 1 --depends-on token-storage --related-to oauth-pkce-login --key-file docs/adr/0007-token-storage.md
at 2026-11-20T13:20:10Z feature plan oauth-login-2026-11-20 --task token-storage --status completed --artifact web/src/auth/session.ts --artifact server/auth/refresh.go
at 2026-11-20T13:20:20Z feature plan oauth-login-2026-11-20 --phase "Docs" --phase-id docs --task adr-token-storage --description "Write the ADR for token storage" --agent architect
at 2026-11-20T13:21:00Z checkpoint create "OAuth login on staging" --type milestone --description "Login, logout and refresh work end to end on staging"
at 2026-11-20T13:22:40Z end --summary "OAuth login with PKCE works on staging; tokens kept in memory" --next "Add the account-linking screen" --next "Write the ADR for token storage"
at 2026-11-21T08:45:00Z start --objective "Account-linking screen for existing users" --epic auth --linear ENG-150 --branch feat/eng-150-linking --commit 9a7e03d
at 2026-11-21T08:46:00Z task new "Account-linking endpoint" --id account-linking-api --priority 3 --depends-on oauth-pkce-login --key-file server/auth/link.go --key-file server/auth/link_test.go
at 2026-11-21T08:46:20Z task new "End-to-end tests for account linking" --id linking-e2e-tests --priority 1 --related-to account-linking-api --key-file e2e/account-linking.spec.ts
at 2026-11-21T08:46:40Z task new "Confirm dialog for account linking" --id account-linking-dialog --priority 2 --depends-on account-linking-api --blocks linking-e2e-tests --key-file web/src/account/LinkDialog.tsx --key-file web/src/account/api.ts
at 2026-11-21T08:47:00Z task switch account-linking-api
at 2026-11-21T08:47:20Z feature set-status oauth-login-2026-11-20 paused
at 2026-11-21T08:47:30Z feature new "Account linking" --id account-linking-2026-11-21 --description "Existing users link a second login"
at 2026-11-21T08:47:40Z feature plan account-linking-2026-11-21 --phase "Backend" --phase-id backend --task account-linking-api --description "Account-linking endpoint" --agent implementer --status in_progress
at 2026-11-21T08:47:50Z feature plan account-linking-2026-11-21 --phase "Web" --phase-id web --task account-linking-dialog --description "Confirm dialog" --agent implementer --status blocked
at 2026-11-21T08:47:55Z feature plan account-linking-2026-11-21 --phase "Web" --task linking-e2e-tests --description "End-to-end tests" --agent qa
at 2026-11-21T08:48:00Z agent start analyst --prompt "How do existing users link a second login?" --artifact server/auth/session.go
at 2026-11-21T09:12:00Z agent handoff --to architect --reason "flow understood" --context "Reuse the PKCE callback; match accounts on a verified email" --artifact docs/linking-flow.md
at 2026-11-21T09:12:33Z update "Sketched the linking flow; reuses the PKCE callback" --progress 15
at 2026-11-21T09:13:00Z task update account-linking-api --phase design --iteration 1 --working-on "The linking flow" --last-action "Sketched the linking flow; reuses the PKCE callback" --next-step "Decide how accounts are matched"
at 2026-11-21T09:50:10Z decide --title "Link accounts by verified email" --choice "Match on verified email, then ask the user to confirm" --rationale "Avoids silent takeover of accounts with unverified emails" --impact high --category security \
  --decided-by architect --approved-by security --rejected-by independent-thinker
at 2026-11-21T09:51:00Z agent handoff --to implementer --reason "design approved" --context "POST /account/link; confirm before linking" --artifact docs/linking-flow.md
at 2026-11-21T09:52:00Z workflow phase implementation
at 2026-11-21T10:05:00Z task update account-linking-api --phase implement --last-action "POST /account/link matches on verified email; tests pass" --next-step "Review the endpoint with Lee before calling it done" \
  --decision "[[demo/decisions/2026-11-21-link-accounts-by-verified-email|Link accounts by verified email]]" \
  --resume-prompt "The endpoint is written and tested; ask Lee for a review of server/auth/link.go, then mark the task completed." --summary "endpoint written, review next"
at 2026-11-21T10:05:30Z agent handoff --to critic --reason "endpoint written" --context "Review server/auth/link.go" --artifact server/auth/link.go --artifact server/auth/link_test.go
at 2026-11-21T10:05:50Z verdict critic conditional --confidence 0.7 --reasoning "Matching is sound; rate-limit the endpoint" --condition "Rate-limit POST /account/link" --condition "Lee reviews before merge"
cp=$(out 2026-11-21T10:06:00Z checkpoint create "Linking endpoint before review" --task account-linking-api --description "Endpoint written and tested, not reviewed")
# Marked done before its review: rolled back to the checkpoint (the rollback
# lists a backup checkpoint of the state before).
at 2026-11-21T10:12:00Z task update account-linking-api --status completed --phase done --last-action "Marked done" --next-step "" --summary "marked done"
at 2026-11-21T10:18:00Z rollback --checkpoint "$cp"
at 2026-11-21T10:20:55Z block "Design for the confirm dialog is not ready" --severity medium
at 2026-11-21T10:21:30Z task update account-linking-dialog --status blocked --blocker "Design for the confirm dialog is not ready" --next-step "Build the dialog from the mock-up" --summary "waiting on design"
at 2026-11-21T10:31:00Z update "Backend endpoint for linking done; waiting on design for the dialog" --progress 35
# A person's edits in Obsidian: two start items ticked, a section of their
# own, the global context's lists.
cur="$work/v/demo/session-current-state.md"
sed -i '0,/- \[ \] \*\*MUST\*\*/s//- [x] **MUST**/' "$cur"
sed -i '0,/- \[ \] \*\*MUST\*\*/s//- [x] **MUST**/' "$cur"
printf '\n## Notes from Ana\n\nThe design team promised the dialog mock-up for Monday. Ping @lee if it slips.\n' >> "$cur"
gc="$work/v/demo/global-context.md"
awk '{print} /^## Hard rules$/ {print "\n- Never store tokens in localStorage or sessionStorage\n- Every auth change gets a test against the staging identity provider\n- No direct pushes to main: a pull request with one review"}
  /^## Tech stack$/ {print "\n- TypeScript, React 19 (web)\n- Go 1.26 (server)\n- PostgreSQL 17"}
  /^## Key paths$/ {print "\n- web: `web/src/`\n- auth server: `server/auth/`\n- ADRs: `docs/adr/`"}
  /^## Services$/ {print "\n- staging: https://staging.example.com\n- identity provider: https://id.example.com"}' "$gc" > "$gc.new" && mv "$gc.new" "$gc"
rm -rf "$root/vault-example"
mkdir -p "$root/vault-example"
(cd "$work/v" && tar --exclude=./.git --exclude=./.sessionvault/state -cf - .) | (cd "$root/vault-example" && tar -xf -)
echo "vault-example/ regenerated"
