package reconcile

import (
	"testing"

	"github.com/sessionvault/sessionvault/internal/session"
)

// joinRecordIn is a session's record; joinSideIn is the current state of
// the same session that another machine went on recording in.
const (
	joinRecordIn = `---
type: session
project: p
session: s-1
---
# Session s-1

## Objective

shared

## Start checklist

- [x] **MUST** Read the state ^c-1

## Updates

- 2026-11-26T09:02:00Z · note · one ^u-1
- 2026-11-26T09:05:00Z · note · three ^u-3

## Decisions

Prose before any decision.

## Next steps

Existing prose.

## Summary

done
`
	joinSideIn = `---
type: session-state
project: p
session: s-1
---
# Current session

## Objective

shared
Also the lexer.
> a quote
- a list line
### a heading

## Start checklist

- [x] **MUST** Read the state ^c-1
- [ ] **SHOULD** Note the commit ^c-2

## Updates

- 2026-11-26T09:01:00Z · note · zero ^u-1-mb
- 2026-11-26T09:02:00Z · note · one ^u-1
- 2026-11-26T09:04:00Z · note · two ^u-2-mb
- 2026-11-26T09:05:00Z · note · three ^u-3

## Decisions

- 2026-11-26T09:03:00Z · [[p/decisions/x|x]] · **choice:** x ^d-1-mb

## Verdicts

- 2026-11-26T09:06:00Z · **qa** · approve · confidence 1 ^v-1-mb

## Next steps

Existing prose.
Ask about the lexer.

## My notes

mine alone
`
)

// joinRecord puts each entry the record lacks into the section of its
// title: after the last entry not later than it, before the first when all
// are later, after the last line of the section when it has no timed entry
// or the entry has no time, in a new section when the record lacks one; a
// person's plain lines of the engine's sections at their end (quotes, list
// items and headings are not a person's lines to join); a person's own
// section not at all. Joining again adds nothing.
func TestJoinRecordPlacesEachEntry(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	record, err := s.ParseDoc("p/sessions/s-1.md", []byte(joinRecordIn))
	if err != nil {
		t.Fatal(err)
	}
	side, err := s.ParseDoc("p/"+session.CurrentStateNote, []byte(joinSideIn))
	if err != nil {
		t.Fatal(err)
	}
	if !joinRecord(record, side) {
		t.Fatal("joinRecord found nothing missing")
	}
	got, err := record.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := `---
type: session
project: p
session: s-1
---
# Session s-1

## Objective

shared
Also the lexer.

## Start checklist

- [x] **MUST** Read the state ^c-1
- [ ] **SHOULD** Note the commit ^c-2

## Updates

- 2026-11-26T09:01:00Z · note · zero ^u-1-mb
- 2026-11-26T09:02:00Z · note · one ^u-1
- 2026-11-26T09:04:00Z · note · two ^u-2-mb
- 2026-11-26T09:05:00Z · note · three ^u-3

## Decisions

Prose before any decision.
- 2026-11-26T09:03:00Z · [[p/decisions/x|x]] · **choice:** x ^d-1-mb

## Next steps

Existing prose.
Ask about the lexer.

## Summary

done

## Verdicts

- 2026-11-26T09:06:00Z · **qa** · approve · confidence 1 ^v-1-mb
`
	if string(got) != want {
		t.Fatalf("joined record:\n%s\nwant:\n%s", got, want)
	}

	// Joining the same side again: nothing is missing.
	record, err = s.ParseDoc("p/sessions/s-1.md", got)
	if err != nil {
		t.Fatal(err)
	}
	if joinRecord(record, side) {
		again, _ := record.Bytes()
		t.Errorf("joining again added to the record:\n%s", again)
	}
}
