package traceexport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// Options say how Export writes.
type Options struct {
	// Format is the tables' file format: table.Parquet or table.CSV. Another is an error
	// wrapping table.ErrFormat, before anything is read or written.
	Format table.Format
	// Force lets Export replace the files of an earlier export in the folder (the table files
	// and the manifest it would write). Without it, Export writes nothing when any of them
	// exists and returns an error wrapping ErrExists that names them. Other files in the folder
	// are never touched.
	Force bool
	// Extra are more tables to write beside the trace's, in the same format and folder and
	// listed in the same manifest: a run's metrics, computed from the same trace. A name must
	// be a lower-case identifier (a-z, 0-9, _, starting with a letter) that no trace table
	// (Tables) or other extra table has; otherwise Export returns an error wrapping
	// ErrTableName before it reads the trace. Their rows must fit their columns (table.Check).
	Extra []table.Table
}

// Stats say what Export read and wrote.
type Stats struct {
	// Header is the trace's header.
	Header trace.Header
	// Complete reports that the trace ends with its end event.
	Complete bool
	// Notes say what the trace lacks, as trace.Read words it: trace.NoteIncomplete, and the
	// line cut mid-line that was set aside.
	Notes []string
	// Events is how many events were exported (the end event included).
	Events int64
	// TraceBytes is the size of the trace read, header included.
	TraceBytes int64
	// Tables are the tables written, in the manifest's order: Tables, then the extra ones.
	Tables []TableStats

	manifestBytes int64
}

// OutputBytes is the size of every file written, the manifest included.
func (s Stats) OutputBytes() int64 {
	var n int64
	for _, t := range s.Tables {
		n += t.Bytes
	}
	return n + s.manifestBytes
}

// TableStats is one table written.
type TableStats struct {
	// Name is the table's name; File its path (the folder joined with name and the format's
	// extension).
	Name, File string
	// Rows is how many rows it holds; Bytes the file's size.
	Rows, Bytes int64
}

// ErrExists means a file Export would write is already in the folder and Options.Force is not
// set: an export never silently replaces another's tables, which may be of another trace.
var ErrExists = errors.New("files of an earlier export exist")

// ErrOutDir means the output folder cannot be used: it names a file, not a folder.
var ErrOutDir = errors.New("not an output folder")

// ErrTableName means an extra table's name is not a lower-case identifier, or is taken by a
// trace table or another extra table.
var ErrTableName = errors.New("invalid extra table name")

// tableName is what an extra table may be named: it becomes a file name and an SQL identifier.
var tableName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ExportFile exports the trace file at path (see Export). An error about the trace names the file.
func ExportFile(ctx context.Context, path, dir string, opts Options) (Stats, error) {
	if _, err := table.ParseFormat(string(opts.Format)); err != nil {
		return Stats{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	st, err := Export(ctx, f, dir, opts)
	if errors.Is(err, trace.ErrBadHeader) || errors.Is(err, trace.ErrMalformed) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return st, err
}

// Export reads a trace from r and writes it into the folder dir (made if missing) as tables in
// opts.Format: one per event kind and one of every event's common fields (Tables), the extra
// tables of opts, and the manifest (ManifestFile). It streams: events are written as they are
// read, and only one row group per table is held in memory (table.RowGroupRows rows, compressed),
// so a trace of any size exports in bounded memory.
//
// Every file is written under a temporary name in dir and renamed into place only when all of
// them are whole, so a failed or cancelled export (ctx is checked every 1,024 events) leaves no
// partial table behind, nor replaces an earlier export's. A trace of another format or version is
// an error wrapping trace.ErrBadHeader, an event that is not what its kind's schema says (an
// unknown kind or field, a value of the wrong type, a missing field) one wrapping
// trace.ErrMalformed that names the line. An incomplete trace (no end event, or a last line cut
// mid-line) is exported up to its last whole line, and Stats.Notes say what it lacks.
func Export(ctx context.Context, r io.Reader, dir string, opts Options) (Stats, error) {
	format, err := table.ParseFormat(string(opts.Format))
	if err != nil {
		return Stats{}, err
	}
	heads := Tables()
	if err := checkExtra(heads, opts.Extra); err != nil {
		return Stats{}, err
	}
	files := make([]string, 0, len(heads)+len(opts.Extra)+1)
	for _, t := range heads {
		files = append(files, t.Name+format.Ext())
	}
	for _, t := range opts.Extra {
		files = append(files, t.Name+format.Ext())
	}
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 256<<10)
	header, err := readHeader(br)
	if err != nil {
		return Stats{}, err
	}
	if err := prepareDir(dir, append(files, ManifestFile), opts.Force); err != nil {
		return Stats{}, err
	}
	out := &output{dir: dir}
	defer out.abort()
	x, err := newExporter(out, format, heads)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Header: header}
	if err := x.run(ctx, br, &st); err != nil {
		return Stats{}, err
	}
	st.TraceBytes = cr.n
	for _, t := range opts.Extra {
		if err := out.writeTable(format, t); err != nil {
			return Stats{}, err
		}
	}
	st.Tables = out.tables
	if err := out.writeManifest(format, &st, append(heads, opts.Extra...)); err != nil {
		return Stats{}, err
	}
	if err := out.commit(); err != nil {
		return Stats{}, err
	}
	return st, nil
}

// checkExtra reports why the extra tables cannot be written beside the trace's, or nil.
func checkExtra(heads []table.Table, extra []table.Table) error {
	taken := make(map[string]bool, len(heads)+len(extra))
	for _, t := range heads {
		taken[t.Name] = true
	}
	for _, t := range extra {
		switch {
		case !tableName.MatchString(t.Name):
			return fmt.Errorf("%w %q: use a lower-case identifier (a-z, 0-9, _, starting with a letter)", ErrTableName, t.Name)
		case taken[t.Name]:
			return fmt.Errorf("%w %q: a trace table or another extra table has it (the trace tables are %s)", ErrTableName, t.Name, tableNames(heads))
		}
		taken[t.Name] = true
		if err := table.Check(t); err != nil {
			return err
		}
	}
	return nil
}

// tableNames lists the tables' names for an error.
func tableNames(ts []table.Table) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// prepareDir makes dir when it is missing, and refuses it when it is a file, or when it holds
// one of files and force is not set.
func prepareDir(dir string, files []string, force bool) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("%w: %w", ErrOutDir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("%w: %w", ErrOutDir, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is a file; give a folder (it is made when missing)", ErrOutDir, dir)
	}
	if force {
		return nil
	}
	var found []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return nil
	}
	what := strings.Join(found, ", ")
	if len(found) > 3 {
		what = strings.Join(found[:3], ", ") + " and " + strconv.Itoa(len(found)-3) + " more"
	}
	return fmt.Errorf("%w: %s holds %s", ErrExists, dir, what)
}

// readHeader reads and checks the trace's header line, as trace.Read does.
func readHeader(br *bufio.Reader) (trace.Header, error) {
	line, err := br.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return trace.Header{}, err
	}
	t, err := trace.Read(bytes.NewReader(line))
	if err != nil {
		return trace.Header{}, err
	}
	return t.Header, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

var _ io.Reader = (*countingReader)(nil)

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// output is the files of one export: written under temporary names, renamed into place by
// commit, removed by abort if commit did not happen.
type output struct {
	dir    string
	files  []*os.File // every file created, for abort to close
	temps  []string   // temporary file of each table, then the manifest
	finals []string   // the name each takes at commit
	tables []TableStats
	done   bool
}

// create opens a temporary file that commit will rename to name.
func (o *output) create(name string) (*os.File, error) {
	f, err := os.CreateTemp(o.dir, "."+name+".*.tmp")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file private (0600); a table is as readable as any file written.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	o.files = append(o.files, f)
	o.temps = append(o.temps, f.Name())
	o.finals = append(o.finals, filepath.Join(o.dir, name))
	return f, nil
}

// tableFile is one table being written: its file, counted, and its row writer.
type tableFile struct {
	f    *os.File
	cw   *countingWriter
	w    table.RowWriter
	name string
	path string
	rows int64
}

// open starts the table t's file in format and writes t's rows.
func (o *output) open(format table.Format, t table.Table) (*tableFile, error) {
	file := t.Name + format.Ext()
	f, err := o.create(file)
	if err != nil {
		return nil, err
	}
	cw := &countingWriter{w: f}
	w, err := table.NewWriter(cw, format, t)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &tableFile{f: f, cw: cw, w: w, name: t.Name, path: filepath.Join(o.dir, file), rows: int64(len(t.Rows))}, nil
}

// close finishes the table's file and records it.
func (o *output) close(tf *tableFile) error {
	err := tf.w.Close()
	if cerr := tf.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tf.path, err)
	}
	o.tables = append(o.tables, TableStats{Name: tf.name, File: tf.path, Rows: tf.rows, Bytes: tf.cw.n})
	return nil
}

// writeTable writes a whole table.
func (o *output) writeTable(format table.Format, t table.Table) error {
	tf, err := o.open(format, t)
	if err != nil {
		return err
	}
	return o.close(tf)
}

// Manifest is what ManifestFile holds: what the export is of, and each table's file and typed
// columns, so that a reader of CSV (which has no types) knows how to take each column, and a
// folder of exports says which trace each came from.
type Manifest struct {
	// Format is the tables' format.
	Format table.Format `json:"format"`
	// Trace is the exported trace's header, and what it lacked.
	Trace ManifestTrace `json:"trace"`
	// Tables are the tables, in the order Export wrote them.
	Tables []ManifestTable `json:"tables"`
}

// ManifestTrace is the exported trace in the manifest: which run it is of, and what it lacked.
type ManifestTrace struct {
	// Version is the trace format's version, whose schema the tables have.
	Version int `json:"version"`
	// HostVersion, Scenario, ScenarioHash, Seed, Clock and Recording are the trace header's
	// (trace.md): which Warren wrote it, of which scenario source, seed and clock.
	HostVersion  string `json:"host_version"`
	Scenario     string `json:"scenario"`
	ScenarioHash string `json:"scenario_hash"`
	Seed         uint64 `json:"seed"`
	Clock        string `json:"clock"`
	Recording    string `json:"recording,omitempty"`
	// Events is how many events were exported; Complete whether the last was the end event;
	// Notes what the trace lacked (Stats.Notes).
	Events   int64    `json:"events"`
	Complete bool     `json:"complete"`
	Notes    []string `json:"notes,omitempty"`
}

// ManifestTable is one table in the manifest: its description, file (relative to the manifest)
// and rows.
type ManifestTable struct {
	table.Description
	File string `json:"file"`
	Rows int64  `json:"rows"`
}

// writeManifest writes the manifest of the tables written so far, and counts its size in st.
func (o *output) writeManifest(format table.Format, st *Stats, heads []table.Table) error {
	h := st.Header
	m := Manifest{Format: format, Trace: ManifestTrace{Version: trace.Version, HostVersion: h.HostVersion, Scenario: h.Scenario,
		ScenarioHash: h.ScenarioHash, Seed: h.Seed, Clock: h.Clock, Recording: h.Recording, Events: st.Events,
		Complete: st.Complete, Notes: st.Notes}}
	for i, t := range heads {
		ts := o.tables[i]
		m.Tables = append(m.Tables, ManifestTable{Description: table.DescribeTable(t), File: filepath.Base(ts.File), Rows: ts.Rows})
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	f, err := o.create(ManifestFile)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(o.dir, ManifestFile), err)
	}
	st.manifestBytes = int64(len(data))
	return nil
}

// commit renames every file into place.
func (o *output) commit() error {
	for i, tmp := range o.temps {
		if err := os.Rename(tmp, o.finals[i]); err != nil {
			return err
		}
	}
	o.done = true
	return nil
}

// abort closes the files a failed export left open and removes the temporary files, unless
// commit renamed them.
func (o *output) abort() {
	if o.done {
		return
	}
	for _, f := range o.files {
		f.Close() // already closed, for the tables written whole: the error says so
	}
	for _, tmp := range o.temps {
		os.Remove(tmp)
	}
}

// countingWriter counts the bytes written through it: a table file's size.
type countingWriter struct {
	w io.Writer
	n int64
}

var _ io.Writer = (*countingWriter)(nil)

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
