package importer

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func aiderFixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/aider/.aider.chat.history.md")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// One session per "# aider chat started at" block: its start, the first
// real request as objective, every user message as an update, aider's own
// edit and commit lines as outcomes, and the block's bytes.
func TestParseAiderHistory(t *testing.T) {
	data := aiderFixture(t)
	ss, skipped, err := ParseAiderHistory(".aider.chat.history.md", data, time.UTC)
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
		if !bytes.Contains(data, s.Original) || !bytes.HasPrefix(s.Original, []byte("# aider chat started at ")) {
			t.Errorf("%s: its text is not a piece of the file", s.ID)
		}
		if r, err := Reparse(s, s.Original, time.UTC); err != nil || !reflect.DeepEqual(r, s) {
			t.Errorf("%s read again: %v\n%+v\n%+v", s.ID, err, r, s)
		}
	}
	if want := []string{"2024-05-30-aider-102213", "2024-06-02-aider-180541", "2024-06-02-aider-180541-2", "2024-06-11-aider-090002"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v", ids)
	}
	first := ss[0]
	if !first.Date.Equal(time.Date(2024, 5, 30, 10, 22, 13, 0, time.UTC)) || first.Format != FormatAiderChat ||
		first.Objective != "the discount is applied twice when a coupon and a member price both apply. fix it so only the larger discount counts" ||
		!reflect.DeepEqual(first.Updates, []string{"/add src/cart.py", first.Objective, "add a test for it", "/exit"}) {
		t.Errorf("first chat: %+v", first)
	}
	if want := []string{"4 user messages, 2 replies, 2 files edited, 2 commits", "Model: gpt-4o with diff edit format, weak model gpt-3.5-turbo",
		"Applied edit to src/cart.py", "Applied edit to src/test_cart.py",
		"Commit 3e9f0a1 fix: apply only the larger of coupon and member discount", "Commit 7b2c4d8 test: larger discount wins"}; !reflect.DeepEqual(first.Outcomes, want) {
		t.Errorf("outcomes %q", first.Outcomes)
	}
	if !bytes.HasSuffix(first.Original, []byte("#### /exit  \n")) {
		t.Errorf("the blank lines before the next chat belong to neither: %q", first.Original[len(first.Original)-20:])
	}
	if es := ss[1]; es.Objective != "hola, necesito que el endpoint /pedidos devuelva también la fecha de entrega estimada (usa el campo eta de la tabla envios)" || len(es.Updates) != 1 {
		t.Errorf("a two-line request in Spanish: %+v", es)
	}
	if ask := ss[2]; ask.Objective != "/ask why does the CI job take 14 minutes?" {
		t.Errorf("only a command: objective %q", ask.Objective)
	}
	// With a zone: aider's local times are read in the vault's.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if bs, _, _ := ParseAiderHistory("h.md", data, berlin); !bs[0].Date.Equal(time.Date(2024, 5, 30, 8, 22, 13, 0, time.UTC)) {
		t.Errorf("Berlin: %v", bs[0].Date)
	}
}

// The file grows by new chats: the chats already there read the same; CRLF
// files read the same as LF ones; text before the first chat, and a file
// without chats, are reported.
func TestAiderHistoryGrowsAndVaries(t *testing.T) {
	data := aiderFixture(t)
	before, _, _ := ParseAiderHistory("h.md", data, time.UTC)
	grown := append(append([]byte(nil), data...), "\n# aider chat started at 2024-07-01 12:00:00\n\n#### /help  \n\n"...)
	after, _, _ := ParseAiderHistory("h.md", grown, time.UTC)
	if len(after) != len(before)+1 || !reflect.DeepEqual(after[:len(before)], before) {
		t.Errorf("appending a chat changed the chats before it")
	}

	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	cs, _, err := ParseAiderHistory("h.md", crlf, time.UTC)
	if err != nil || len(cs) != len(before) {
		t.Fatal(err)
	}
	for i := range cs {
		if !bytes.Contains(crlf, cs[i].Original) || !bytes.HasSuffix(cs[i].Original, []byte("\r\n")) {
			t.Errorf("CRLF chat %d: not a piece of the file", i)
		}
		a, b := cs[i], before[i]
		a.Original, b.Original = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("CRLF chat %d reads differently:\n%+v\n%+v", i, a, b)
		}
	}

	pre := append([]byte("notes from an older tool\n"), data...)
	if _, sk, _ := ParseAiderHistory("h.md", pre, time.UTC); len(sk) != 1 || !strings.Contains(sk[0].Reason, "before the first") {
		t.Errorf("text before the first chat: %v", sk)
	}
	bad := append([]byte(nil), data...)
	bad = bytes.Replace(bad, []byte("rename `Kunde`"), []byte("rename `K\xfcnde`"), 1)
	if ss, sk, _ := ParseAiderHistory("h.md", bad, time.UTC); len(ss) != 3 || len(sk) != 1 || !strings.Contains(sk[0].Reason, "UTF-8") {
		t.Errorf("a chat that is not UTF-8: %d chats, %v", len(ss), sk)
	}
	if _, _, err := ParseAiderHistory("notes.md", []byte("# Notes\n\n#### not aider\n"), time.UTC); !errors.Is(err, ErrNotAiderHistory) {
		t.Errorf("not a history: %v", err)
	}
}
