// Package notemerge merges versions of a note: Merge3, the line merge the
// write path uses when a person saved the note while the engine wrote it
// (it never drops a line either side added, and keeps the engine's entries
// an editor's stale buffer dropped); and MergeNotes, the merge of two
// machines' versions (the git merge driver and `remote sync`), which joins
// the engine's entries by id in the sections an Ownership names and merges
// everything else — a person's text — three-way by lines, as git does,
// marking only the lines both sides changed differently. It reads and
// writes nothing: versions in, merged bytes out.
package notemerge
