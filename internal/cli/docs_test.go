package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsFiguresTraced checks the convention of issue 23 item 7: every
// fenced block of lockbench output in README.md and docs/*.md starts with
// the command that produced it (a first non-empty line "$ lockbench ...",
// "$ make ..." or "$ ./bin/lockbench ...") and has a commit (a word of 7+
// hex digits) and a date (2026-...) in the 6 lines before it; every
// Markdown table whose header has ops/s or p99 has a command (a `lockbench
// ...` or `make ...` code span) and a commit and a date in the 8 lines
// before it.
func TestDocsFiguresTraced(t *testing.T) {
	files := []string{"../../README.md"}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...) // docs/claims.md included
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range docsProblems(string(b)) {
			t.Errorf("%s:%s", strings.TrimPrefix(f, "../../"), p)
		}
	}
}

var (
	docsOutputLine = regexp.MustCompile(`[┌│└]|^results written to |[0-9] (ops|cycles)/s|^harness-(ratio|overhead) |^thresholds: [0-9]+ passed|^no regression in `)
	docsCmdLine    = regexp.MustCompile(`^\$ (lockbench|make|\./bin/lockbench)( |$)`)
	docsCommit     = regexp.MustCompile(`\b[0-9a-f]*[a-f][0-9a-f]*\b`)
	docsDate       = regexp.MustCompile(`\b2026-[01][0-9]-[0-3][0-9]\b`)
	docsCmdSpan    = regexp.MustCompile("`(\\$ )?(lockbench|make|\\./bin/lockbench) [^`]*`")
)

// docsHasCommit reports whether s has a word of 7 to 40 hex digits with a
// letter in it (a short commit; plain numbers do not count).
func docsHasCommit(s string) bool {
	for _, w := range docsCommit.FindAllString(s, -1) {
		if len(w) >= 7 && len(w) <= 40 {
			return true
		}
	}
	return false
}

// docsProblems returns "line: problem" for each untraced block or table.
func docsProblems(text string) []string {
	lines := strings.Split(text, "\n")
	before := func(i, n int) string {
		lo := i - n
		if lo < 0 {
			lo = 0
		}
		return strings.Join(lines[lo:i], "\n")
	}
	var out []string
	itoa := func(i int) string { return strconv.Itoa(i + 1) }
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			start := i
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				j++
			}
			body := lines[start+1 : j]
			i = j
			isOutput := false
			for _, b := range body {
				if docsOutputLine.MatchString(strings.TrimSpace(b)) {
					isOutput = true
					break
				}
			}
			if !isOutput {
				continue
			}
			first := ""
			for _, b := range body {
				if strings.TrimSpace(b) != "" {
					first = strings.TrimSpace(b)
					break
				}
			}
			if !docsCmdLine.MatchString(first) {
				out = append(out, itoa(start)+": fenced block of lockbench output does not start with the command that produced it ($ lockbench ..., $ make ...)")
			}
			ctx := before(start, 6)
			if !docsHasCommit(ctx) || !docsDate.MatchString(ctx) {
				out = append(out, itoa(start)+": fenced block of lockbench output has no commit and date in the 6 lines before it")
			}
			continue
		}
		// A Markdown table: a header row followed by a |---| row.
		if strings.HasPrefix(l, "|") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---") &&
			(i == 0 || !strings.HasPrefix(lines[i-1], "|")) {
			h := strings.ToLower(l)
			if !strings.Contains(h, "ops/s") && !strings.Contains(h, "p99") {
				continue
			}
			ctx := before(i, 8)
			if !docsCmdSpan.MatchString(ctx) {
				out = append(out, itoa(i)+": table of measured figures has no command (`lockbench ...` or `make ...`) in the 8 lines before it")
			}
			if !docsHasCommit(ctx) || !docsDate.MatchString(ctx) {
				out = append(out, itoa(i)+": table of measured figures has no commit and date in the 8 lines before it")
			}
		}
	}
	return out
}

// TestDocsProblemsDetects checks the checker itself on small documents.
func TestDocsProblemsDetects(t *testing.T) {
	bad := "Some run.\n\n```\n┌──┐\n│ a │\n└──┘\nresults written to x.json\n```\n"
	if got := docsProblems(bad); len(got) != 2 {
		t.Errorf("untraced block: got %q, want 2 problems", got)
	}
	good := "Measured on 2026-12-01 with the code of commit ee57b92:\n\n```\n$ lockbench run --duration 3s\n│ a │\nresults written to x.json\n```\n"
	if got := docsProblems(good); len(got) != 0 {
		t.Errorf("traced block: got %q, want none", got)
	}
	notOutput := "```sh\nmake run   # the default matrix\n```\n"
	if got := docsProblems(notOutput); len(got) != 0 {
		t.Errorf("command-only block: got %q, want none", got)
	}
	table := "Figures:\n\n| strategy | ops/s |\n|---|---|\n| atomic | 600 |\n"
	if got := docsProblems(table); len(got) != 2 {
		t.Errorf("untraced table: got %q, want 2 problems", got)
	}
	tableOK := "`lockbench run --duration 3s` on 2026-12-01, commit ee57b92:\n\n| strategy | ops/s |\n|---|---|\n| atomic | 600 |\n"
	if got := docsProblems(tableOK); len(got) != 0 {
		t.Errorf("traced table: got %q, want none", got)
	}
}
