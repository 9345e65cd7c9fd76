package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// writeFiles creates files (path -> content) under dir, with parents.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readBack(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReadFile(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{
		"a.txt":         "one\ntwo\nthree\nfour\n",
		"noeol.txt":     "one\ntwo\nthree",
		"empty.txt":     "",
		"sub/b.txt":     "nested\n",
		"sub/dir/.keep": "",
	})
	cases := []struct {
		name string
		args string
		want string
	}{
		{"whole file verbatim", `{"path":"a.txt"}`, "one\ntwo\nthree\nfour\n"},
		{"whole file without final newline", `{"path":"noeol.txt"}`, "one\ntwo\nthree"},
		{"empty file", `{"path":"empty.txt"}`, "[empty file]"},
		{"nested path", `{"path":"sub/b.txt"}`, "nested\n"},
		{"dot segments inside the workdir", `{"path":"./sub/../a.txt","limit":1}`, "one\n[showed lines 1-1; more lines follow; continue with offset=2]"},
		{"window with more lines", `{"path":"a.txt","offset":2,"limit":2}`, "two\nthree\n[showed lines 2-3; more lines follow; continue with offset=4]"},
		{"window to the end", `{"path":"a.txt","offset":3}`, "three\nfour\n[showed lines 3-4; end of file]"},
		{"limit exactly at the end", `{"path":"a.txt","offset":3,"limit":2}`, "three\nfour\n[showed lines 3-4; end of file]"},
		{"limit past the end", `{"path":"a.txt","limit":99}`, "one\ntwo\nthree\nfour\n[showed lines 1-4; end of file]"},
		{"window on a file without final newline", `{"path":"noeol.txt","offset":3}`, "three\n[showed lines 3-3; end of file]"},
		{"integral float offset", `{"path":"a.txt","offset":4.0}`, "four\n[showed lines 4-4; end of file]"},
		{"absolute path inside the workdir", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "sub", "b.txt")), "nested\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustRun(t, ReadFile{}, ec, tc.args); got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\n", "noeol.txt": "x\ny", "sub/b.txt": "b"})
	cases := []struct {
		name     string
		args     string
		sentinel error
		want     string
	}{
		{"offset past the end", `{"path":"a.txt","offset":5}`, ErrInvalidArguments, `offset 5 is past the end of "a.txt" (it has 2 lines)`},
		{"offset one past the last line", `{"path":"a.txt","offset":3}`, ErrInvalidArguments, `offset 3 is past the end of "a.txt" (it has 2 lines)`},
		{"offset past a file without final newline", `{"path":"noeol.txt","offset":4}`, ErrInvalidArguments, `(it has 2 lines)`},
		{"missing file", `{"path":"nope.txt"}`, fs.ErrNotExist, `cannot read "nope.txt": no such file or directory`},
		{"directory", `{"path":"sub"}`, ErrNotRegularFile, `cannot read "sub": not a regular file (it is a directory; use list_dir)`},
		{"file used as a directory", `{"path":"a.txt/x"}`, syscall.ENOTDIR, `cannot read "a.txt/x": not a directory`},
		{"NUL byte", "{\"path\":\"a\\u0000b\"}", ErrInvalidArguments, "NUL byte"},
		{"huge offset", `{"path":"a.txt","offset":1e30}`, ErrInvalidArguments, "offset must be an integer between 1 and"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, ReadFile{}, ec, tc.args)
			wantError(t, err, tc.sentinel, tc.want)
			if strings.Contains(err.Error(), dir) {
				t.Fatalf("error %q leaks the host path", err)
			}
		})
	}
}

func TestReadFileCapsOutput(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	line := strings.Repeat("x", 99) + "\n" // 100 bytes
	writeFiles(t, dir, map[string]string{"big.txt": strings.Repeat(line, 3000)})

	got := mustRun(t, ReadFile{}, ec, `{"path":"big.txt"}`)
	wantNote := "[truncated: output is capped at 262144 bytes; showed lines 1-2621; 37900 bytes of the file not shown; continue with offset=2622]"
	if !strings.HasSuffix(got, "\n"+wantNote) {
		t.Fatalf("note = %q, want %q", got[max(0, len(got)-200):], wantNote)
	}
	if body := strings.TrimSuffix(got, wantNote); body != strings.Repeat(line, 2621) {
		t.Fatalf("body has %d bytes, want 2621 whole lines", len(body))
	}

	rest := mustRun(t, ReadFile{}, ec, `{"path":"big.txt","offset":2622}`)
	if rest != strings.Repeat(line, 379)+"[showed lines 2622-3000; end of file]" {
		t.Fatalf("continuation = %d bytes ending %q", len(rest), rest[max(0, len(rest)-60):])
	}
}

func TestReadFileLongLine(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{
		"long.txt": strings.Repeat("x", 300000) + "\nsecond\n",
		"utf8.txt": "a" + strings.Repeat("é", 200000),
	})
	got := mustRun(t, ReadFile{}, ec, `{"path":"long.txt"}`)
	wantNote := "[truncated: line 1 is longer than the 262144-byte read cap; showed its first 262144 bytes; 37864 bytes of the file not shown; continue with offset=2]"
	if got != strings.Repeat("x", MaxReadBytes)+"\n"+wantNote {
		t.Fatalf("long line result ends %q", got[max(0, len(got)-200):])
	}
	if next := mustRun(t, ReadFile{}, ec, `{"path":"long.txt","offset":2}`); next != "second\n[showed lines 2-2; end of file]" {
		t.Fatalf("continuation = %q", next)
	}
	cut := mustRun(t, ReadFile{}, ec, `{"path":"utf8.txt"}`)
	body, _, _ := strings.Cut(cut, "\n[truncated")
	if !utf8.ValidString(body) || len(body) != MaxReadBytes-1 {
		t.Fatalf("cut is not on a character boundary: %d bytes, valid %v", len(body), utf8.ValidString(body))
	}
}

// TestFileToolsRefuseSpecialFiles points read_file and edit_file at a socket: opening special
// files could block a lane or read a device, so only regular files are read.
func TestFileToolsRefuseSpecialFiles(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cases := []struct {
		tool Tool
		args string
		want string
	}{
		{ReadFile{}, `{"path":"sock"}`, `cannot read "sock": not a regular file`},
		{EditFile{}, `{"path":"sock","old_string":"a","new_string":"b"}`, `cannot edit "sock": not a regular file`},
	}
	for _, tc := range cases {
		t.Run(tc.tool.Spec().Name, func(t *testing.T) {
			_, err := run(t, tc.tool, ec, tc.args)
			wantError(t, err, ErrNotRegularFile, tc.want)
		})
	}
}

func TestWriteFile(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	cases := []struct {
		name    string
		args    string
		want    string
		file    string
		content string
	}{
		{"new file with parents", `{"path":"a/b/c.txt","content":"hello"}`, `Wrote 5 bytes to "a/b/c.txt" (new file)`, "a/b/c.txt", "hello"},
		{"replace", `{"path":"a/b/c.txt","content":"bye"}`, `Wrote 3 bytes to "a/b/c.txt" (replaced the previous content)`, "a/b/c.txt", "bye"},
		{"empty content", `{"path":"empty.txt","content":""}`, `Wrote 0 bytes to "empty.txt" (new file)`, "empty.txt", ""},
		{"multi-byte content counts bytes", `{"path":"u.txt","content":"héllo"}`, `Wrote 6 bytes to "u.txt" (new file)`, "u.txt", "héllo"},
		{"path shown as given", `{"path":"./x/../top.txt","content":"t"}`, `Wrote 1 bytes to "./x/../top.txt" (new file)`, "top.txt", "t"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustRun(t, WriteFile{}, ec, tc.args); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if got := readBack(t, filepath.Join(dir, filepath.FromSlash(tc.file))); got != tc.content {
				t.Fatalf("file holds %q, want %q", got, tc.content)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Fatal(`write_file created the lexically removed directory "x"`)
	}
}

func TestWriteFileErrors(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"file.txt": "f", "sub/keep": ""})
	cases := []struct {
		name     string
		args     string
		sentinel error
		want     string
	}{
		{"path is a directory", `{"path":"sub","content":"x"}`, syscall.EISDIR, `cannot write "sub": is a directory`},
		{"parent is a file", `{"path":"file.txt/x","content":"x"}`, syscall.ENOTDIR, `"file.txt/x": not a directory`},
		{"workdir itself", `{"path":".","content":"x"}`, nil, `cannot write "."`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, WriteFile{}, ec, tc.args)
			wantError(t, err, tc.sentinel, tc.want)
		})
	}
}

func TestEditFile(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	cases := []struct {
		name    string
		initial string
		args    string
		want    string
		after   string
	}{
		{"single occurrence", "hello world\n", `{"path":"f.txt","old_string":"world","new_string":"there"}`, `Replaced 1 occurrence in "f.txt"`, "hello there\n"},
		{"replace_all", "a-a-a", `{"path":"f.txt","old_string":"a","new_string":"bb","replace_all":true}`, `Replaced 3 occurrences in "f.txt"`, "bb-bb-bb"},
		{"replace_all with one occurrence", "x y", `{"path":"f.txt","old_string":"y","new_string":"z","replace_all":true}`, `Replaced 1 occurrence in "f.txt"`, "x z"},
		{"delete text", "keep drop keep", `{"path":"f.txt","old_string":" drop","new_string":""}`, `Replaced 1 occurrence in "f.txt"`, "keep keep"},
		{"multi-line match", "a\nb\nc\n", `{"path":"f.txt","old_string":"a\nb\n","new_string":"B\n"}`, `Replaced 1 occurrence in "f.txt"`, "B\nc\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			writeFiles(t, dir, map[string]string{"f.txt": tc.initial})
			if got := mustRun(t, EditFile{}, ec, tc.args); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if got := readBack(t, filepath.Join(dir, "f.txt")); got != tc.after {
				t.Fatalf("file holds %q, want %q", got, tc.after)
			}
		})
	}
}

func TestEditFileKeepsPermissions(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"secret.txt": "old"})
	p := filepath.Join(dir, "secret.txt")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, EditFile{}, ec, `{"path":"secret.txt","old_string":"old","new_string":"new"}`)
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode after edit = %v, %v; want 0600", info.Mode(), err)
	}
}

func TestEditFileErrors(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"f.txt": "one two two", "sub/keep": ""})
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxEditBytes+1); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		args     string
		sentinel error
		want     string
	}{
		{"not found", `{"path":"f.txt","old_string":"three","new_string":"3"}`, ErrNoMatch,
			`cannot edit "f.txt": old_string not found (it must match the file's text exactly, whitespace included)`},
		{"whitespace differs", `{"path":"f.txt","old_string":"one  two","new_string":"x"}`, ErrNoMatch, "old_string not found"},
		{"ambiguous", `{"path":"f.txt","old_string":"two","new_string":"2"}`, ErrAmbiguousMatch,
			`cannot edit "f.txt": old_string is not unique: it occurs 2 times (add surrounding text to make it unique, or set replace_all to replace every occurrence)`},
		{"identical strings", `{"path":"f.txt","old_string":"one","new_string":"one"}`, ErrInvalidArguments, "old_string and new_string are identical"},
		{"missing file", `{"path":"nope.txt","old_string":"a","new_string":"b"}`, fs.ErrNotExist, `cannot edit "nope.txt": no such file or directory`},
		{"directory", `{"path":"sub","old_string":"a","new_string":"b"}`, ErrNotRegularFile, `cannot edit "sub": not a regular file`},
		{"too large", `{"path":"big.bin","old_string":"a","new_string":"b"}`, ErrFileTooLarge,
			fmt.Sprintf(`cannot edit "big.bin": file is too large (%d bytes; edit_file handles at most %d)`, MaxEditBytes+1, MaxEditBytes)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, EditFile{}, ec, tc.args)
			wantError(t, err, tc.sentinel, tc.want)
			if got := readBack(t, filepath.Join(dir, "f.txt")); got != "one two two" {
				t.Fatalf("a failed edit changed the file to %q", got)
			}
		})
	}
}

func TestListDir(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	if got := mustRun(t, ListDir{}, ec, `{}`); got != "(empty directory)" {
		t.Fatalf("fresh workdir lists %q", got)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatal("the workdir was not created on first use")
	}
	writeFiles(t, dir, map[string]string{"b.txt": "", "a.txt": "", "Z.txt": "", "zdir/x": "", "adir/y": "", "adir/nested/z": ""})
	if err := os.Mkdir(filepath.Join(dir, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("adir", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args string
		want string
	}{
		{"default path", `{}`, "Z.txt\na.txt\nadir/\nb.txt\nemptydir/\nlink\nzdir/"},
		{"explicit dot", `{"path":"."}`, "Z.txt\na.txt\nadir/\nb.txt\nemptydir/\nlink\nzdir/"},
		{"empty string path", `{"path":""}`, "Z.txt\na.txt\nadir/\nb.txt\nemptydir/\nlink\nzdir/"},
		{"subdirectory", `{"path":"adir"}`, "nested/\ny"},
		{"through an inner symlink", `{"path":"link"}`, "nested/\ny"},
		{"empty directory", `{"path":"emptydir"}`, "(empty directory)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustRun(t, ListDir{}, ec, tc.args); got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestListDirErrors(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"a.txt": "x"})
	cases := []struct {
		name     string
		args     string
		sentinel error
		want     string
	}{
		{"not a directory", `{"path":"a.txt"}`, ErrNotDirectory, `cannot list "a.txt": not a directory`},
		{"missing", `{"path":"nope"}`, fs.ErrNotExist, `cannot list "nope": no such file or directory`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, ListDir{}, ec, tc.args)
			wantError(t, err, tc.sentinel, tc.want)
		})
	}
}

func TestListDirCapsEntries(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	files := map[string]string{}
	for i := range MaxListEntries + 3 {
		files[fmt.Sprintf("f%04d", i)] = ""
	}
	writeFiles(t, dir, files)
	got := mustRun(t, ListDir{}, ec, `{}`)
	lines := strings.Split(got, "\n")
	if len(lines) != MaxListEntries+1 || lines[0] != "f0000" || lines[MaxListEntries-1] != "f0999" ||
		lines[MaxListEntries] != "[3 more entries not shown]" {
		t.Fatalf("%d lines, first %q, last two %q", len(lines), lines[0], lines[len(lines)-2:])
	}
}

// TestFileToolsConfinement attacks every file tool with the three escape routes — "..", absolute
// paths and symbolic links planted inside the workdir — and checks that each is refused with
// ErrOutsideWorkdir, that nothing outside changes, and that nothing outside leaks.
func TestFileToolsConfinement(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	writeFiles(t, outside, map[string]string{"secret.txt": "TOP SECRET"})
	writeFiles(t, dir, map[string]string{"inside.txt": "fine", "sub/keep": ""})
	links := map[string]string{
		"abs_dir_link":  outside,                              // absolute target, a directory outside
		"rel_dir_link":  filepath.Join("..", "outside"),       // relative target climbing out
		"file_link.txt": filepath.Join(outside, "secret.txt"), // a file outside
		"sub/deep_link": filepath.Join("..", "..", "outside"), // relative, from a subdirectory
		"inner_link":    "inside.txt",                         // stays inside: allowed
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	attacks := []struct {
		name string
		path string
	}{
		{"dotdot", "../outside/secret.txt"},
		{"dotdot after a subdirectory", "sub/../../outside/secret.txt"},
		{"bare dotdot", ".."},
		{"absolute path outside", secret},
		{"absolute system path", "/etc/passwd"},
		{"absolute symlink to a directory", "abs_dir_link/secret.txt"},
		{"relative symlink to a directory", "rel_dir_link/secret.txt"},
		{"symlink to a file", "file_link.txt"},
		{"nested relative symlink", "sub/deep_link/secret.txt"},
		{"symlinked directory itself", "abs_dir_link"},
	}
	calls := []struct {
		tool Tool
		args func(path string) string
	}{
		{ReadFile{}, func(p string) string { return fmt.Sprintf(`{"path":%q}`, p) }},
		{WriteFile{}, func(p string) string { return fmt.Sprintf(`{"path":%q,"content":"pwned"}`, p) }},
		{EditFile{}, func(p string) string { return fmt.Sprintf(`{"path":%q,"old_string":"TOP","new_string":"pwned"}`, p) }},
		{ListDir{}, func(p string) string { return fmt.Sprintf(`{"path":%q}`, p) }},
	}
	for _, c := range calls {
		for _, a := range attacks {
			t.Run(c.tool.Spec().Name+"/"+a.name, func(t *testing.T) {
				args := c.args(a.path)
				res, err := run(t, c.tool, ec, args)
				wantError(t, err, ErrOutsideWorkdir)
				if strings.Contains(err.Error(), "TOP SECRET") || strings.Contains(res.Content, "TOP SECRET") {
					t.Fatal("the secret leaked")
				}
				if !filepath.IsAbs(a.path) && strings.Contains(err.Error(), outside) {
					t.Fatalf("error %q leaks the host path", err)
				}
				if got := readBack(t, secret); got != "TOP SECRET" {
					t.Fatalf("the outside file was changed to %q", got)
				}
			})
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("files were created outside the workdir: %v", entries)
	}
	if got := mustRun(t, ReadFile{}, ec, `{"path":"inner_link"}`); got != "fine" {
		t.Fatalf("a symlink that stays inside was refused or misread: %q", got)
	}
}

// validFileArgs are schema-valid arguments for each file tool, for tests that fail later.
var validFileArgs = map[string]string{
	NameReadFile:  `{"path":"a.txt"}`,
	NameWriteFile: `{"path":"a.txt","content":"x"}`,
	NameEditFile:  `{"path":"a.txt","old_string":"a","new_string":"b"}`,
	NameListDir:   `{"path":"a.txt"}`,
}

func TestFileToolsNeedAUsableWorkdir(t *testing.T) {
	base := t.TempDir()
	notADir := filepath.Join(base, "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(base, "dangling")
	if err := os.Symlink(filepath.Join(base, "missing", "dir"), dangling); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		ec   *ExecContext
		want string
	}{
		{"nil context", nil, "the call has no workdir"},
		{"empty workdir", &ExecContext{}, "the call has no workdir"},
		{"relative workdir", &ExecContext{Workdir: "rel/work"}, "must be an absolute path"},
		{"workdir is a file", &ExecContext{Workdir: notADir}, "cannot open the workdir"},
		{"workdir under a file", &ExecContext{Workdir: filepath.Join(notADir, "w")}, "cannot open the workdir: not a directory"},
		{"workdir is a dangling symlink", &ExecContext{Workdir: dangling}, ErrWorkdirLink.Error()},
	}
	for _, tc := range cases {
		for _, tool := range []Tool{ReadFile{}, WriteFile{}, EditFile{}, ListDir{}} {
			t.Run(tc.name+"/"+tool.Spec().Name, func(t *testing.T) {
				_, err := run(t, tool, tc.ec, validFileArgs[tool.Spec().Name])
				wantError(t, err, ErrNoWorkdir, tc.want)
				if strings.Contains(err.Error(), base) {
					t.Fatalf("error %q leaks the host path", err)
				}
			})
		}
	}
}

func TestFileToolsHonourCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ec := NewExecContext(ctx, "c", 1, AgentRef{}, filepath.Join(t.TempDir(), "w"))
	for _, tool := range []Tool{ReadFile{}, WriteFile{}, EditFile{}, ListDir{}} {
		_, err := run(t, tool, ec, validFileArgs[tool.Spec().Name])
		wantError(t, err, context.Canceled, "cancelled")
	}
	if _, err := os.Stat(ec.Workdir); !os.IsNotExist(err) {
		t.Fatal("a cancelled call still created the workdir")
	}
}

// TestFileToolsDirectCallsCheckArguments calls Execute without a Handle, as a careless caller
// might: bad arguments must still be refused, never panic.
func TestFileToolsDirectCallsCheckArguments(t *testing.T) {
	ec, _ := newWorkdirEC(t)
	cases := []struct {
		name string
		tool Tool
		args string
	}{
		{"read_file unknown field", ReadFile{}, `{"path":"a","bogus":1}`},
		{"read_file zero offset", ReadFile{}, `{"path":"a","offset":0}`},
		{"read_file fractional limit", ReadFile{}, `{"path":"a","limit":2.5}`},
		{"read_file empty path", ReadFile{}, `{"path":""}`},
		{"read_file trailing data", ReadFile{}, `{"path":"a"} x`},
		{"write_file not an object", WriteFile{}, `"a"`},
		{"edit_file empty old_string", EditFile{}, `{"path":"a","old_string":"","new_string":"b"}`},
		{"list_dir wrong type", ListDir{}, `{"path":3}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.tool.Execute(ec, json.RawMessage(tc.args))
			if !errors.Is(err, ErrInvalidArguments) {
				t.Fatalf("err = %v, want ErrInvalidArguments", err)
			}
		})
	}
}
