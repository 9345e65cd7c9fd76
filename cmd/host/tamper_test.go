package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tamperValues are what a tampered recording puts in place of a field's value: another type,
// numbers past every range (huge, negative, fractional, past uint64), null, empty and absurdly
// long values.
var tamperValues = []string{`"x"`, `""`, `-1`, `0`, `1.5`, `1e308`, `18446744073709551616`, `9223372036854775807`,
	`4294967296`, `null`, `true`, `[]`, `{}`, `[{}]`, `"` + strings.Repeat("y", 1<<16) + `"`}

// mutants returns every tampered version of the recording data: each field of each line (and of
// the objects in its arrays) with each tamperValue, without the field, and twice (a duplicate
// key); each line cut in half, dropped, doubled, and moved after the next; the file cut at
// points inside lines.
func mutants(data []byte) map[string][]byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	out := map[string][]byte{}
	with := func(name string, i int, line []byte) {
		copyLines := slices.Clone(lines)
		copyLines[i] = line
		out[name] = bytes.Join(copyLines, nil)
	}
	for i, line := range lines {
		body := bytes.TrimSuffix(line, []byte("\n"))
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) != nil {
			continue
		}
		edit := func(name string, fields map[string]json.RawMessage) {
			raw, _ := json.Marshal(fields)
			with(fmt.Sprintf("line %d %s", i+1, name), i, append(raw, '\n'))
		}
		for k, v := range fields {
			for _, tv := range tamperValues {
				f := cloneFields(fields)
				f[k] = json.RawMessage(tv)
				edit(fmt.Sprintf("%s=%.20s", k, tv), f)
			}
			f := cloneFields(fields)
			delete(f, k)
			edit("no "+k, f)
			// A duplicate key, written after the first: the line says two things.
			with(fmt.Sprintf("line %d %s twice", i+1, k), i, append(append([]byte(nil), body[:len(body)-1]...), []byte(fmt.Sprintf(`,%q:%s}`+"\n", k, tamperValues[2]))...))
			var arr []map[string]json.RawMessage
			if json.Unmarshal(v, &arr) != nil {
				continue
			}
			for j := range arr {
				for ik := range arr[j] {
					for _, tv := range tamperValues[:10] {
						inner := slices.Clone(arr)
						inner[j] = cloneFields(arr[j])
						inner[j][ik] = json.RawMessage(tv)
						raw, _ := json.Marshal(inner)
						f := cloneFields(fields)
						f[k] = raw
						edit(fmt.Sprintf("%s[%d].%s=%.20s", k, j, ik, tv), f)
					}
				}
			}
		}
		with(fmt.Sprintf("line %d cut", i+1), i, append(slices.Clone(body[:len(body)/2]), '\n'))
		out[fmt.Sprintf("line %d dropped", i+1)] = bytes.Join(slices.Delete(slices.Clone(lines), i, i+1), nil)
		out[fmt.Sprintf("line %d doubled", i+1)] = bytes.Join(slices.Insert(slices.Clone(lines), i, line), nil)
		if i+1 < len(lines) {
			swapped := slices.Clone(lines)
			swapped[i], swapped[i+1] = swapped[i+1], swapped[i]
			out[fmt.Sprintf("line %d after the next", i+1)] = bytes.Join(swapped, nil)
		}
		out[fmt.Sprintf("file cut in line %d", i+1)] = slices.Clone(data[:bytes.Index(data, line)+len(line)/2])
	}
	out["no header"] = bytes.Join(lines[1:], nil)
	return out
}

func cloneFields(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// tamperSources are recordings of every entry kind: tool calls with script ops, fan-out items, a
// wall-clock run's passes and hand-overs, live model turns (whole and streamed, format versions 1
// and 2) and a failed live attempt.
func tamperSources(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for name, args := range map[string][]string{
		"quickstart": {example("quickstart.toml"), "--agents", "3"},
		"scripts":    {example("scripts.toml")},
		"fanout":     {example("fanout.toml")},
		"wall":       {wallScenario(t, dir, "quickstart.toml"), "--agents", "2"},
	} {
		tr, rec := filepath.Join(dir, name+".jsonl"), filepath.Join(dir, name+".rec")
		if r := host(t, append([]string{"run", "--trace", tr, "--record", rec, "--no-progress"}, args...)...); r.code > exitExpect {
			t.Fatalf("recording %s: exit %d\n%s", name, r.code, r.stderr)
		}
		out[name] = rec
	}
	// The shipped live recording and the version 1 one, copied with what they name.
	for name, from := range map[string]string{"live": examples, "v1": filepath.Join("testdata", "provider", "v1")} {
		to := filepath.Join(dir, name)
		if err := os.CopyFS(to, os.DirFS(from)); err != nil {
			t.Fatal(err)
		}
		out[name] = map[string]string{"live": filepath.Join(to, "live.rec"), "v1": filepath.Join(to, "streamed.rec")}[name]
	}
	return out
}

// TestTamperedRecordings: host replay --check of a recording tampered in any of the ways
// mutants makes (every field of every line, of every entry kind) never panics, never hangs, and
// ends with exit 0 (the edit changed nothing the run reads), 1 (the replay diverged, or its trace
// differs), or 2 with an error that names the recording. A seeded sample runs (a quarter of the
// shipped live recording's mutants, a sixteenth of the others'); all of them, some 16,000, with
// WARREN_TAMPER_ALL=1.
func TestTamperedRecordings(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	all := os.Getenv("WARREN_TAMPER_ALL") == "1"
	sources := tamperSources(t)
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		rec := sources[name]
		data, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		ms := mutants(data)
		ran := 0
		for _, m := range slices.Sorted(maps.Keys(ms)) {
			if !all && rng.IntN(map[bool]int{true: 4, false: 16}[name == "live"]) != 0 {
				continue
			}
			ran++
			path := filepath.Join(filepath.Dir(rec), "tampered.rec")
			if err := os.WriteFile(path, ms[m], 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var stdout, stderr bytes.Buffer
			code := run(&env{stdout: &stdout, stderr: &stderr, ctx: ctx}, []string{"replay", path, "--check"})
			timedOut := ctx.Err() != nil
			cancel()
			out := stdout.String() + stderr.String()
			switch {
			case timedOut:
				t.Errorf("%s, %s: the replay was still going after 30 s (exit %d)", name, m, code)
			case strings.Contains(out, "panic") || strings.Contains(out, "goroutine "):
				t.Errorf("%s, %s: a panic:\n%.2000s", name, m, out)
			case code < 0 || code > exitBadInput:
				t.Errorf("%s, %s: exit %d\n%.2000s", name, m, code, out)
			case code == exitBadInput && !strings.Contains(stderr.String(), path):
				t.Errorf("%s, %s: a refusal that does not name the file:\n%.2000s", name, m, stderr.String())
			}
		}
		t.Logf("%s: %d of %d tampered recordings replayed", name, ran, len(ms))
	}
}
