package systems

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// dynamicDir is the folder of an agent's workdir whose *.js files become its tools when its
// blueprint sets dynamic_tools.
const dynamicDir = "tools"

// ScriptTool turns a compiled script into the tool the host registers: a scripting.Tool bound to
// the run's engine and settings. The runner sets Host.ScriptTool; without it dynamic_tools finds
// nothing.
type ScriptTool func(*scripting.Script) tools.Tool

// lookupTool resolves a call's tool for the agent: its own dynamic tools first, then its stage's
// registry.
func lookupTool(d *components.AgentData, p *components.Profile, stage int32, name string) (*tools.Handle, bool) {
	if d.Dynamic != nil {
		if h, ok := d.Dynamic.Registry.Lookup(name); ok {
			return h, true
		}
	}
	return p.Registry(stage).Lookup(name)
}

// stageTools is what the agent's model is shown in stage: the stage's tools, and its dynamic
// tools after them.
func stageTools(d *components.AgentData, p *components.Profile, stage int32) []models.ToolInfo {
	if d.Dynamic == nil || len(d.Dynamic.Infos) == 0 {
		return p.StageTools[stage]
	}
	return append(slices.Clip(p.StageTools[stage]), d.Dynamic.Infos...)
}

// scanDynamic brings the dynamic tools of an agent with dynamic_tools up to date with its
// workdir's tools/ folder, before its model turn: a file written there (by any tool) is compiled
// and advertised from this turn on; one that fails to compile, or takes the name of a tool the
// agent already has, is reported to the agent once per version and not advertised; a removed
// file takes its tool away. An unchanged folder costs one directory read and a stat per file.
// It runs on the world goroutine, inside infer_dispatch: the read is local and small, and only
// agents whose blueprint asks for it pay for it.
func (h *Host) scanDynamic(tick uint64, id *components.Identity, d *components.AgentData, p *components.Profile, stage int32) {
	if h.ScriptTool == nil || d.Workdir == "" {
		return
	}
	dir := filepath.Join(d.Workdir, dynamicDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
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
		return
	}
	if dyn == nil {
		if len(stamps) == 0 {
			return
		}
		dyn = &components.DynamicTools{Reported: map[string]string{}}
		d.Dynamic = dyn
	}
	dyn.Stamps = stamps
	reg := tools.NewScoped(tools.NewRegistry())
	scope := reg.PushScope()
	var infos []models.ToolInfo
	var names []string
	for _, file := range slices.Sorted(maps.Keys(stamps)) {
		path := filepath.Join(dir, file)
		problem := ""
		src, err := os.ReadFile(path)
		var script *scripting.Script
		if err == nil {
			script, err = scripting.Compile(filepath.ToSlash(filepath.Join(dynamicDir, file)), src)
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
			t := h.ScriptTool(script)
			if _, err := reg.RegisterInScope(scope, t); err != nil {
				problem = fmt.Sprintf("%s/%s: %v", dynamicDir, file, err)
			}
		}
		if problem != "" {
			if dyn.Reported[file] != problem {
				dyn.Reported[file] = problem
				text := "[dynamic tools] " + problem + " (this tool is not available until the file is fixed)"
				d.Inbox = append(d.Inbox, models.Message{Role: models.RoleUser, Content: text})
				h.Trace.Message(tick, ref(id, d), trace.AgentRef{Name: trace.HostName}, "dynamic_tools", text)
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
