package policy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/warren/sandbox"
)

// heredocLines builds the here-document corpus: for every operator, delimiter spelling, line
// placed before the first delimiter, and place the here-document sits in, a line whose here-
// document either ends at the first delimiter (and the rm after it runs) or at the second (and
// the rm is text). bash decides which; the analysis must agree or refuse the line.
func heredocLines() []string {
	ops := []string{"<<", "<<-"}
	delims := []struct{ word, line string }{
		{"EOF", "EOF"}, {"'EOF'", "EOF"}, {`"EOF"`, "EOF"}, {`\EOF`, "EOF"}, {`E"O"F`, "EOF"}, {"$'EOF'", "$'EOF'"},
	}
	tricks := []string{"", `\`, `x\`, `\\`, `\\\`, "EOF\\", " EOF", "EOF ", "\tEOF", "EOF)", "EOF;", "EOF#", `\EOF`,
		"$(", "`", "$(echo", "'", `"`, "${", "$((", "E\\\nOF", "#", "<<EOF"}
	places := []struct{ before, after string }{
		{"cat %s", ""},
		{"echo $(cat %s", "\n)"},
		{"echo `cat %s", "\n`"},
		{"f() { cat %s", "\n}; f"},
		{"cat %s | cat", ""},
		{"cat %s; echo x", ""},
		{"cat <<A %s", ""},
		{`x="$(cat %s`, "\n)\""},
	}
	var lines []string
	for _, op := range ops {
		for _, d := range delims {
			for _, trick := range tricks {
				for _, p := range places {
					var sb strings.Builder
					sb.WriteString(fmt.Sprintf(p.before, op+d.word) + "\n")
					if strings.HasPrefix(p.before, "cat <<A") {
						sb.WriteString("A\n") // the first here-document, then ours
					}
					if trick != "" {
						sb.WriteString(trick + "\n")
					}
					head := sb.String()
					for _, first := range firstDelimiterLines(d.line, trick) {
						lines = append(lines, head+first+"\nrm -f victim\n"+d.line+p.after)
					}
				}
			}
		}
	}
	return lines
}

// firstDelimiterLines are the lines tried where the here-document might end: the delimiter, and
// (once per delimiter, with no line before it) lines that start like it.
func firstDelimiterLines(delim, trick string) []string {
	if trick != "" {
		return []string{delim}
	}
	return []string{delim, delim + ")", delim + ";", delim + " ", " " + delim, "\t" + delim, delim + "#", delim + " )", delim + "`", delim + "\\"}
}

// TestHeredocBoundaries runs the here-document corpus with bash, the shell the sandbox runs,
// and requires the analysis to see the here-document end where bash does: whenever bash runs
// the rm after the first delimiter, the line's keys hold shell:rm, or the analysis refuses the
// line. bash runs with an rm that only records that it ran (no sandbox is needed: the lines
// run nothing but rm), so this test needs bash and nothing else.
func TestHeredocBoundaries(t *testing.T) {
	if _, err := os.Stat(sandbox.ShellPath); err != nil {
		t.Fatalf("the here-document test needs bash at %s: %v", sandbox.ShellPath, err)
	}
	dir := t.TempDir()
	stubs := filepath.Join(dir, "bin")
	if err := os.Mkdir(stubs, 0o755); err != nil {
		t.Fatal(err)
	}
	// Only rm is a program: bash finds no cat and goes on, which is all the test needs of it.
	if err := os.WriteFile(filepath.Join(stubs, "rm"), []byte("#!/bin/sh\necho rm >> \"$HEREDOC_LOG\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := heredocLines()
	var (
		mu                 sync.Mutex
		wg                 sync.WaitGroup
		sem                = make(chan struct{}, 4)
		refused, bashRanRm int
	)
	for i, line := range lines {
		a := AnalyzeShell(line)
		if a.Why != "" {
			refused++
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			log := filepath.Join(dir, fmt.Sprintf("log-%d", i))
			ran, err := runRecorded(line, stubs, log)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("%q: %v", line, err)
			case slices.Contains(ran, "rm"):
				bashRanRm++
				if !slices.Contains(a.Keys, ProgramKey("rm", "")) {
					t.Errorf("bash ends the here-document where the analysis does not: it ran rm, keys %q\n%s", a.Keys, line)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d lines: %d refused by the analysis, %d where bash ran rm", len(lines), refused, bashRanRm)
	if bashRanRm == 0 || refused == len(lines) {
		t.Errorf("the corpus checked nothing: bash ran rm in %d lines, the analysis refused %d of %d", bashRanRm, refused, len(lines))
	}
}

// runRecorded runs line with bash as the sandbox does, in a fresh folder, with only the stub
// programs on PATH, and returns the names the stubs recorded.
func runRecorded(line, stubs, log string) ([]string, error) {
	work, err := os.MkdirTemp(filepath.Dir(log), "w-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	// A stop can only hide a run, never invent one, so a loaded machine cannot fail the test.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	argv := sandbox.ShellArgv(line)
	cmd := exec.CommandContext(ctx, sandbox.ShellPath, argv[1:]...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + stubs, "HEREDOC_LOG=" + log, "LANG=C"}
	_ = cmd.Run() // a syntax error is bash's reading too
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}
