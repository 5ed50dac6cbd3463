package importer

import (
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Times in chat-style logs (Claude Code session notes, aider histories) are
// written in the writer's local time, mostly without a zone:
// "2025-01-16 13:47", "2025-06-16 12:15 PM", "2024-05-30 10:22:13", and in
// file names "2025-01-16-1347". They are read in the vault's time zone
// (config time_zone) unless they name one.

var (
	reLocalDateTime = lazyregexp.New(`(\d{4})-(\d{2})-(\d{2})(?:(?:[T ]|,\s*|\s+at\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:\s*([AaPp])\.?[Mm]\.?)?(?:\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})\b)?)?`)
	reClock         = lazyregexp.New(`\b(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp])\.?[Mm]\.?)?`)
	reNameDateTime  = lazyregexp.New(`^(\d{4})-(\d{2})-(\d{2})-(\d{2})(\d{2})(?:$|[^0-9])`)
)

// localDateTime finds the first date, with its time when one follows, in s:
// a zone written after it is used, else loc. hasClock reports whether a time
// of day was found.
func localDateTime(s string, loc *time.Location) (t time.Time, hasClock, ok bool) {
	m := reLocalDateTime().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false, false
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	d, _ := strconv.Atoi(m[3])
	if mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false, false
	}
	if m[4] == "" {
		return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, loc), false, true
	}
	h, mi, sec, ok := clock(m[4], m[5], m[6], m[7])
	if !ok {
		return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, loc), false, true
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, 0, zone(m[8], loc)), true, true
}

// clockOn finds a time of day alone ("12:15 PM", "09:05") in s and puts it
// on day's date, in day's zone.
func clockOn(s string, day time.Time) (time.Time, bool) {
	m := reClock().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	h, mi, sec, ok := clock(m[1], m[2], m[3], m[4])
	if !ok {
		return time.Time{}, false
	}
	return time.Date(day.Year(), day.Month(), day.Day(), h, mi, sec, 0, day.Location()), true
}

// nameDateTime parses the "YYYY-MM-DD-HHMM" prefix of a base name, in loc.
func nameDateTime(base string, loc *time.Location) (time.Time, bool) {
	m := reNameDateTime().FindStringSubmatch(base)
	if m == nil {
		return time.Time{}, false
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	d, _ := strconv.Atoi(m[3])
	h, _ := strconv.Atoi(m[4])
	mi, _ := strconv.Atoi(m[5])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, 0, 0, loc), true
}

func clock(hs, ms, ss, ampm string) (h, m, s int, ok bool) {
	h, _ = strconv.Atoi(hs)
	m, _ = strconv.Atoi(ms)
	if ss != "" {
		s, _ = strconv.Atoi(ss)
	}
	switch strings.ToLower(ampm) {
	case "a":
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		if h == 12 {
			h = 0
		}
	case "p":
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		if h != 12 {
			h += 12
		}
	}
	return h, m, s, h <= 23 && m <= 59 && s <= 60
}

func zone(z string, loc *time.Location) *time.Location {
	switch z {
	case "":
		return loc
	case "Z", "UTC", "GMT":
		return time.UTC
	}
	z = strings.ReplaceAll(z, ":", "")
	hh, _ := strconv.Atoi(z[1:3])
	mm, _ := strconv.Atoi(z[3:5])
	off := hh*3600 + mm*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off)
}
