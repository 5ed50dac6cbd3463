package recovery

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// numbered returns n lines "prefix 1" .. "prefix n", each ending in "\n".
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// quoted returns the quote lines of "prefix from" .. "prefix to".
func quoted(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "> %s %d\n", prefix, i)
	}
	return b.String()
}

// TestMemoryBankExcerptNone: a project without memory bank notes gets no
// memory bank part, and its resume prompt no heading for one.
func TestMemoryBankExcerptNone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if got := f.MemoryBankExcerpt("demo", 2); got != "" {
		t.Fatalf("excerpt without notes = %q", got)
	}
	// A folder in the place of a note is not read.
	if err := os.MkdirAll(filepath.Join(f.V.Root, "demo", "memory-bank", "activeContext.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := f.MemoryBankExcerpt("demo", 2); got != "" {
		t.Fatalf("excerpt of a folder = %q", got)
	}
}

// TestMemoryBankExcerptBounded: the excerpt quotes the active context and
// the progress notes past their front matter and surrounding blank lines:
// a long note up to its first 20 lines (saying so, and marking the cut), a
// short one whole, a blank line as a bare ">", a CRLF note without its
// carriage returns; the headings take the level asked for.
func TestMemoryBankExcerptBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "demo/memory-bank/activeContext.md", "---\ntitle: Context\ntags: [a]\n---\n\n\n"+numbered("ctx", 30)+"\n\n")
	f.write(t, "demo/memory-bank/progress.md", "Done: parser\r\n\r\nNext: tests\r\n")
	root := f.V.Root
	want := "## Memory bank\n\nThe start of the project's memory bank notes; read the whole note for the rest.\n" +
		"\n### Active context: the first 20 lines of " + filepath.Join(root, "demo", "memory-bank", "activeContext.md") + "\n\n" +
		quoted("ctx", 1, 20) + "> …\n" +
		"\n### Progress: the whole of " + filepath.Join(root, "demo", "memory-bank", "progress.md") + "\n\n" +
		"> Done: parser\n>\n> Next: tests\n"
	if got := f.MemoryBankExcerpt("demo", 2); got != want {
		t.Fatalf("excerpt:\n%s\nwant:\n%s", got, want)
	}
	// One level deeper in the resume prompt.
	f.startSession(t, "With a memory bank")
	if err := f.RecordRecoveryPoint("demo", "auto", ""); err != nil {
		t.Fatal(err)
	}
	rep := f.check(t, RecoveryOptions{Project: "demo"})
	mustContain(t, "resume prompt", rep.Sessions[0].ResumePrompt,
		"### Conversation Summary\n", "\n### Memory bank\n", "\n#### Active context: the first 20 lines of ", "> ctx 20\n> …\n",
		"\n#### Progress: the whole of ", "> Next: tests\n", "\n### Recommended Actions\n")
}

// TestMemoryBankExcerptKiloContext: without activeContext.md, Kilo Code's
// context.md is the active context; with both, activeContext.md is quoted
// and context.md is not. A note of exactly 20 lines is quoted whole.
func TestMemoryBankExcerptKiloContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "demo/memory-bank/context.md", numbered("kilo", 20))
	got := f.MemoryBankExcerpt("demo", 3)
	want := "### Memory bank\n\nThe start of the project's memory bank notes; read the whole note for the rest.\n" +
		"\n#### Active context: the whole of " + filepath.Join(f.V.Root, "demo", "memory-bank", "context.md") + "\n\n" + quoted("kilo", 1, 20)
	if got != want {
		t.Fatalf("excerpt:\n%s\nwant:\n%s", got, want)
	}
	f.write(t, "demo/memory-bank/activeContext.md", "Roo's context\n")
	got = f.MemoryBankExcerpt("demo", 3)
	mustContain(t, "excerpt", got, "activeContext.md\n\n> Roo's context\n")
	mustNotContain(t, "excerpt", got, "kilo", "Progress")
}

// TestMemoryBankExcerptByteBound: long lines are cut by bytes as well as
// lines: at most 1200 bytes per note, cut at a line end; a single line
// longer than that is cut at a character boundary (the excerpt stays valid
// UTF-8); a very large note is read only in part and its excerpt says it
// goes on.
func TestMemoryBankExcerptByteBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// 15 lines of 100 bytes: 11 fit in 1200 bytes (with their line ends).
	line := strings.Repeat("x", 97)
	f.write(t, "demo/memory-bank/activeContext.md", numbered(line, 15))
	got := f.MemoryBankExcerpt("demo", 2)
	mustContain(t, "excerpt", got, "the first 11 lines of", quoted(line, 1, 11)+"> …\n")
	mustNotContain(t, "excerpt", got, line+" 12")

	// One line of 3000 two-byte characters after one byte (byte 1200 is
	// inside a character), then more: cut before that character.
	long := "a" + strings.Repeat("é", 3000)
	f.write(t, "demo/memory-bank/activeContext.md", long+"\nsecond line\n")
	got = f.MemoryBankExcerpt("demo", 2)
	if !utf8.ValidString(got) {
		t.Fatal("excerpt of a long line is not valid UTF-8")
	}
	mustContain(t, "excerpt", got, "the first 1 lines of", "> a"+strings.Repeat("é", 599)+"\n> …\n")
	mustNotContain(t, "excerpt", got, "second line", strings.Repeat("é", 600))

	// One long line and nothing else: its start, marked as cut.
	f.write(t, "demo/memory-bank/activeContext.md", strings.Repeat("z", 5000))
	got = f.MemoryBankExcerpt("demo", 2)
	mustContain(t, "excerpt", got, "> "+strings.Repeat("z", 1200)+"\n> …\n")

	// A short single line: whole.
	f.write(t, "demo/memory-bank/activeContext.md", "short\n")
	mustContain(t, "excerpt", f.MemoryBankExcerpt("demo", 2), "the whole of", "> short\n")
	mustNotContain(t, "excerpt", f.MemoryBankExcerpt("demo", 2), "…")

	// A note of 100 000 bytes whose first 20 lines are short.
	f.write(t, "demo/memory-bank/activeContext.md", numbered("big", 20)+strings.Repeat(strings.Repeat("y", 99)+"\n", 1000))
	got = f.MemoryBankExcerpt("demo", 2)
	mustContain(t, "excerpt", got, "the first 20 lines of", quoted("big", 1, 20)+"> …\n")
	mustNotContain(t, "excerpt", got, "yyy")

	// A note larger than what is read, made of lines longer than the excerpt
	// bound: the line cut short by the read is dropped, the first line's
	// start is quoted.
	f.write(t, "demo/memory-bank/activeContext.md", strings.Repeat(strings.Repeat("w", 5000)+"\n", 3))
	got = f.MemoryBankExcerpt("demo", 2)
	mustContain(t, "excerpt", got, "> "+strings.Repeat("w", 1200)+"\n> …\n")
	mustNotContain(t, "excerpt", got, strings.Repeat("w", 1201))
}

// TestMemoryBankExcerptLineCutByTheRead: of a note larger than what is
// read, the line the read ends in is not quoted in part.
func TestMemoryBankExcerptLineCutByTheRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Front matter up to byte 9500, then a body line across byte 9600 (the
	// read's end), then more.
	fm := "---\nsummary: " + strings.Repeat("s", 9500-len("---\nsummary: \n---\n")) + "\n---\n"
	f.write(t, "demo/memory-bank/activeContext.md", fm+"The body starts here "+strings.Repeat("b", 300)+" and ends here\nmore\n"+strings.Repeat("m", 500))
	got := f.MemoryBankExcerpt("demo", 2)
	mustContain(t, "excerpt", got, "### Active context: ", "> …\n")
	mustNotContain(t, "excerpt", got, "The body starts here", "summary:")
}

// TestMemoryBankExcerptFrontMatterOnly: a note that is all front matter
// still gets its heading (the note exists) and quotes nothing.
func TestMemoryBankExcerptFrontMatterOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "demo/memory-bank/progress.md", "---\nstatus: empty\n...\n\n")
	got := f.MemoryBankExcerpt("demo", 2)
	mustContain(t, "excerpt", got, "### Progress: the whole of ")
	mustNotContain(t, "excerpt", got, "status: empty", "> ")
}
