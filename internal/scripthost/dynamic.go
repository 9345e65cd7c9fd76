// Package scripthost is what the host gives script tools beyond a plain call: Layer 3 of the
// permissions (which host functions a script may use), call_tool through the full gate, a
// per-call random seed, and the dynamic tools an agent with dynamic_tools writes into its
// workdir. Tool dispatch binds a call's ExecContext with Bind and infer_dispatch keeps an agent's
// dynamic tools current with Dynamic.Scan; both are tested without a world.
package scripthost

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/internal/safepath"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// dynamicDir is the folder of an agent's workdir whose *.js files become its tools when its
// blueprint sets dynamic_tools.
const dynamicDir = "tools"

// maxDynamicToolBytes bounds a dynamic tool's file: the host reads it on the world goroutine, and
// no tool an agent writes needs more (the scripting engine's strings are capped at 4 MiB).
const maxDynamicToolBytes = 1 << 20

// ScriptTool turns a compiled script into the tool the host registers: a scripting.Tool bound to
// the run's engine and settings. The composition root gives one to NewDynamic; without it
// dynamic_tools finds nothing.
type ScriptTool func(*scripting.Script) tools.Tool

// Dynamic compiles agents' dynamic tools: a world resource, touched only by the world's
// goroutine.
type Dynamic struct {
	tool  ScriptTool
	trace *trace.Writer
	rec   *recording.Writer
	tape  *recording.Tape
}

// Record makes the scanner record what its scans read (rec: host run --record), or, with tape
// (host replay), take it from the recording instead of a workdir.
func (h *Dynamic) Record(rec *recording.Writer, tape *recording.Tape) {
	if h != nil {
		h.rec, h.tape = rec, tape
	}
}

// NewDynamic returns the dynamic-tool scanner that makes tools with tool (nil: dynamic_tools
// finds nothing) and reports files that do not compile into tw (nil: not traced).
func NewDynamic(tool ScriptTool, tw *trace.Writer) *Dynamic { return &Dynamic{tool: tool, trace: tw} }

// Lookup resolves a call's tool for the agent: its own dynamic tools first, then its stage's
// registry.
func Lookup(d *components.AgentData, p *components.Profile, stage int32, name string) (*tools.Handle, bool) {
	if d.Dynamic != nil {
		if h, ok := d.Dynamic.Registry.Lookup(name); ok {
			return h, true
		}
	}
	return p.Registry(stage).Lookup(name)
}

// StageTools is what the agent's model is shown in stage: the stage's tools, and its dynamic
// tools after them.
func StageTools(d *components.AgentData, p *components.Profile, stage int32) []models.ToolInfo {
	if d.Dynamic == nil || len(d.Dynamic.Infos) == 0 {
		return p.StageTools[stage]
	}
	return append(slices.Clip(p.StageTools[stage]), d.Dynamic.Infos...)
}

// Scan brings the dynamic tools of an agent with dynamic_tools up to date with its
// workdir's tools/ folder, before its model turn: a file written there (by any tool) is compiled
// and advertised from this turn on; one that fails to compile, or takes the name of a tool the
// agent already has, is reported to the agent once per version and not advertised; a removed
// file takes its tool away. An unchanged folder costs the workdir's open, one directory read and
// a stat per file. It runs on the world goroutine, inside infer_dispatch: the read is local and
// small (listDynamic and readDynamic never block on a FIFO, follow a link out of the workdir or
// read more than maxDynamicToolBytes), and only agents whose blueprint asks for it pay for it.
//
// The folder is an input from outside the world: a recorded run keeps what each scan that found
// a change read (recording.Dynamic, keyed by the agent and the model turn it comes before), and a
// replay rebuilds from that instead of reading a workdir.
func (h *Dynamic) Scan(tick, turn uint64, id *components.Identity, d *components.AgentData, p *components.Profile, stage int32) {
	if h == nil || h.tool == nil {
		return
	}
	var files []recording.DynamicFile
	if h.tape.Covers(tick) {
		got, ok := h.tape.Dynamic(d.Name, turn)
		if !ok {
			return // the recorded run saw no change here
		}
		files = got.Files
		h.rec.Dynamic(tick, got) // a resumed run records what it replays
		if d.Dynamic == nil {
			d.Dynamic = &components.DynamicTools{Reported: map[string]string{}}
		}
	} else {
		if d.Workdir == "" {
			return
		}
		var changed bool
		if files, changed = h.observe(d); !changed {
			return
		}
		h.rec.Dynamic(tick, recording.Dynamic{Agent: d.Name, Turn: turn, Files: files})
	}
	h.rebuild(tick, id, d, p, stage, files)
}

// observe lists the agent's tools/ folder and, when it changed since the last scan (the stamps
// differ), reads every *.js file in it, in name order.
func (h *Dynamic) observe(d *components.AgentData) ([]recording.DynamicFile, bool) {
	root, entries, err := listDynamic(d.Workdir)
	if err != nil {
		return nil, false
	}
	defer root.Close()
	dyn := d.Dynamic
	stamps := make(map[string]components.FileStamp, len(entries))
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".js") || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		stamps[e.Name()] = components.FileStamp{Size: info.Size(), ModNano: info.ModTime().UnixNano()}
	}
	if dyn != nil && maps.Equal(dyn.Stamps, stamps) {
		return nil, false
	}
	if dyn == nil {
		if len(stamps) == 0 {
			return nil, false
		}
		dyn = &components.DynamicTools{Reported: map[string]string{}}
		d.Dynamic = dyn
	}
	dyn.Stamps = stamps
	files := make([]recording.DynamicFile, 0, len(stamps))
	for _, file := range slices.Sorted(maps.Keys(stamps)) {
		f := recording.DynamicFile{Name: file}
		src, err := readDynamic(root, path.Join(dynamicDir, file))
		if err != nil {
			f.Err = err.Error()
		} else {
			f.Source = string(src)
		}
		files = append(files, f)
	}
	return files, true
}

// rebuild compiles the agent's dynamic tools from files (read now or recorded).
func (h *Dynamic) rebuild(tick uint64, id *components.Identity, d *components.AgentData, p *components.Profile, stage int32, files []recording.DynamicFile) {
	dyn := d.Dynamic
	reg := tools.NewScoped(tools.NewRegistry())
	scope := reg.PushScope()
	var infos []models.ToolInfo
	var names []string
	for _, f := range files {
		file := f.Name
		problem := ""
		var script *scripting.Script
		var err error
		if f.Err != "" {
			err = errors.New(f.Err)
		} else {
			script, err = scripting.Compile(path.Join(dynamicDir, file), []byte(f.Source))
		}
		switch {
		case err != nil:
			problem = err.Error()
		case slices.Contains(names, script.Name):
			problem = fmt.Sprintf("%s/%s: tool %q is already defined by another file in %s/", dynamicDir, file, script.Name, dynamicDir)
		default:
			if _, taken := p.Registry(stage).Lookup(script.Name); taken {
				problem = fmt.Sprintf("%s/%s: tool %q takes the name of a tool you already have", dynamicDir, file, script.Name)
			}
		}
		if problem == "" {
			t := h.tool(script)
			if _, err := reg.RegisterInScope(scope, t); err != nil {
				problem = fmt.Sprintf("%s/%s: %v", dynamicDir, file, err)
			}
		}
		if problem != "" {
			if dyn.Reported[file] != problem {
				dyn.Reported[file] = problem
				text := "[dynamic tools] " + problem + " (this tool is not available until the file is fixed)"
				d.Inbox = append(d.Inbox, models.Message{Role: models.RoleUser, Content: text})
				h.trace.Message(tick, trace.AgentRef{ID: id.ID, Name: d.Name}, trace.AgentRef{Name: trace.HostName}, "dynamic_tools", text)
			}
			continue
		}
		delete(dyn.Reported, file)
		names = append(names, script.Name)
		infos = append(infos, models.ToolInfo{Name: script.Name, Description: script.Description, Parameters: script.Parameters})
	}
	slices.Sort(names)
	slices.SortFunc(infos, func(a, b models.ToolInfo) int { return cmp.Compare(a.Name, b.Name) })
	dyn.Registry, dyn.Scope, dyn.Infos, dyn.Names = reg, scope, infos, names
}

// listDynamic opens the agent's workdir (tools.OpenWorkdir: no link followed on the way to it) and
// lists its tools/ folder (tools.OpenDir: a link in the workdir is followed only while it stays
// inside, and a FIFO in the folder's place cannot block the world goroutine). A missing folder
// is an empty list; any other failure (a workdir not made yet included) is an error, and the
// agent's dynamic tools stay as they were. The caller closes the root.
func listDynamic(workdir string) (*os.Root, []fs.DirEntry, error) {
	root, err := tools.OpenWorkdir(workdir)
	if err != nil {
		return nil, nil, err
	}
	dir, err := tools.OpenDir(root, dynamicDir)
	if errors.Is(err, fs.ErrNotExist) {
		return root, nil, nil
	}
	if err != nil {
		_ = root.Close()
		return nil, nil, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		_ = root.Close()
		return nil, nil, err
	}
	return root, entries, nil
}

// readDynamic reads the dynamic tool file rel of the workdir root: a regular file (opened without
// blocking on a FIFO, through no link out of the workdir, so the host never reads a host file such
// as /etc/shadow for an agent) of at most maxDynamicToolBytes. Its errors name rel, never a host
// path: they reach the agent and the trace.
func readDynamic(root *os.Root, rel string) ([]byte, error) {
	f, info, err := tools.OpenRegular(root, rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, safepath.Bare(err))
	}
	defer f.Close()
	tooBig := fmt.Errorf("%s: larger than the %d bytes a dynamic tool may have", rel, maxDynamicToolBytes)
	if info.Size() > maxDynamicToolBytes {
		return nil, tooBig
	}
	src, err := io.ReadAll(io.LimitReader(f, maxDynamicToolBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", rel, safepath.Bare(err))
	case len(src) > maxDynamicToolBytes:
		return nil, tooBig
	}
	return src, nil
}
