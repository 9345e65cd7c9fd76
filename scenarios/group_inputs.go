package scenarios

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/memory"
)

// Bounds of a group's inputs: they are read whole when the scenario loads (and hashed into the
// scenario's hash), and the corpus is copied into every agent's workdir.
const (
	// MaxCorpusFiles and MaxCorpusBytes bound a corpus folder.
	MaxCorpusFiles = 10_000
	MaxCorpusBytes = 64 << 20
	// MaxItems bounds an items file's lines, one per agent.
	MaxItems = 10_000_000
	// DefaultInputsAt is where a corpus goes in a workdir when inputs.at is left out.
	DefaultInputsAt = "inputs"
	// ItemKey is the memory key an agent finds its item under.
	ItemKey = "item"
)

// GroupInputs are a group's inputs ([groups.inputs]).
type GroupInputs struct {
	// CorpusDir is the corpus folder as written (resolved against the scenario's folder) and
	// Files its files, read whole when the scenario loaded; At is where each agent finds them in
	// its workdir.
	CorpusDir string
	Files     []CorpusFile
	At        string
	// ItemsFile is the JSON Lines file whose line i is agent i's item, and Items its lines.
	ItemsFile string
	Items     []json.RawMessage
}

// CorpusFile is one file of a corpus: its path relative to the corpus folder (slash-separated)
// and its content.
type CorpusFile struct {
	Rel  string
	Data []byte
}

// Item is agent index's item (nil when the group has no items file or fewer lines).
func (in *GroupInputs) Item(index int) json.RawMessage {
	if in == nil || index >= len(in.Items) {
		return nil
	}
	return in.Items[index]
}

// inputs compiles a group's [groups.inputs] at path, hashing what it reads into hash. It returns
// nil for a group without inputs.
func (c *compiler) inputs(path string, fi *fileInputs, hash io.Writer) *GroupInputs {
	if fi == nil {
		return nil
	}
	in := &GroupInputs{At: DefaultInputsAt}
	if fi.Corpus == "" && fi.Items == "" {
		c.errorf(path, "empty: give corpus (a folder copied into each workdir) or items (a JSON Lines file, one line per agent), or both")
		return nil
	}
	if fi.At != "" {
		if !filepath.IsLocal(fi.At) {
			c.errorf(tomlfile.JoinKey(path, "at"), "%q: where the corpus goes is a path inside the workdir (no .. and not absolute)", fi.At)
		}
		in.At = filepath.Clean(fi.At)
		if fi.Corpus == "" {
			c.errorf(tomlfile.JoinKey(path, "at"), "at places the corpus, and there is no corpus")
		}
	}
	if fi.Corpus != "" {
		var ok bool
		if in.CorpusDir, ok = c.resolveAt(tomlfile.JoinKey(path, "corpus"), fi.Corpus); !ok {
			return nil
		}
		files, err := readCorpus(in.CorpusDir)
		if err != nil {
			c.errorf(tomlfile.JoinKey(path, "corpus"), "%q: %v", fi.Corpus, err)
		}
		in.Files = files
		for _, f := range files {
			fmt.Fprintf(hash, "\ncorpus %s %s %d\n", path, f.Rel, len(f.Data))
			hash.Write(f.Data)
		}
	}
	if fi.Items != "" {
		var ok bool
		if in.ItemsFile, ok = c.resolveAt(tomlfile.JoinKey(path, "items"), fi.Items); !ok {
			return nil
		}
		items, err := readItems(in.ItemsFile)
		if err != nil {
			c.errorf(tomlfile.JoinKey(path, "items"), "%q: %v", fi.Items, err)
		}
		in.Items = items
		for _, it := range items {
			hash.Write(it)
			hash.Write([]byte{'\n'})
		}
	}
	return in
}

// readCorpus reads every regular file under dir, sorted by path. A link or any other kind of
// file is refused: the corpus is what the scenario ships, and it is copied, not followed.
func readCorpus(dir string) ([]CorpusFile, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("not a folder: corpus names a folder whose files every agent gets")
	}
	var out []CorpusFile
	total := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file (a link or a device): a corpus holds files only", filepath.ToSlash(rel))
		case len(out) == MaxCorpusFiles:
			return fmt.Errorf("more than %d files", MaxCorpusFiles)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if total += len(data); total > MaxCorpusBytes {
			return fmt.Errorf("more than %d bytes: copied into every workdir, a corpus must stay small (give agents items instead)", MaxCorpusBytes)
		}
		out = append(out, CorpusFile{Rel: filepath.ToSlash(rel), Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the folder holds no files")
	}
	slices.SortFunc(out, func(a, b CorpusFile) int {
		switch {
		case a.Rel < b.Rel:
			return -1
		case a.Rel > b.Rel:
			return 1
		}
		return 0
	})
	return out, nil
}

// readItems reads a JSON Lines file: every line one JSON value, compacted, at most the size of a
// memory value (the agent keeps its item in memory).
func readItems(path string) ([]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4*memory.MaxValueBytes)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			return nil, fmt.Errorf("line %d is empty: every line is one agent's item (a JSON value)", line)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, text); err != nil {
			return nil, fmt.Errorf("line %d is not JSON: %w", line, err)
		}
		if b.Len() > memory.MaxValueBytes {
			return nil, fmt.Errorf("line %d is %d bytes: an item is at most %d (it is kept in the agent's memory)", line, b.Len(), memory.MaxValueBytes)
		}
		if len(out) == MaxItems {
			return nil, fmt.Errorf("more than %d lines", MaxItems)
		}
		out = append(out, json.RawMessage(b.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the file holds no items")
	}
	return out, nil
}

// itemCount checks a group's count against its items: a group with items and no count has one
// agent per item; one with a count may not have more agents than items.
func (c *compiler) itemCount(path string, g *Group, written bool) {
	if g.Inputs == nil || g.Inputs.Items == nil {
		return
	}
	n := len(g.Inputs.Items)
	switch {
	case !written:
		g.Count = n
	case g.Count > n:
		c.errorf(tomlfile.JoinKey(path, "count"), "%d agents, and %s has %d items: every agent gets one (leave count out for one agent per item)", g.Count, strconv.Quote(g.Inputs.ItemsFile), n)
	}
}
