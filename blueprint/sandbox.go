package blueprint

import (
	"fmt"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/sandbox"
)

// sandboxSetting is one key of a sandbox table, by its path under the table, with the part of a
// Spec it sets: only returns a Spec holding nothing but that setting, and whether it is set.
type sandboxSetting struct {
	key  string
	only func(sandbox.Spec) (sandbox.Spec, bool)
}

// sandboxSettings are every key of a sandbox table, in the order the docs list them. The
// settings are independent (each is checked against the outer layer's value of the same
// setting), so tightening by each in turn is tightening by the whole Spec.
var sandboxSettings = [...]sandboxSetting{
	{"mode", func(s sandbox.Spec) (sandbox.Spec, bool) { return sandbox.Spec{Mode: s.Mode}, s.Mode != nil }},
	{"network", func(s sandbox.Spec) (sandbox.Spec, bool) { return sandbox.Spec{Network: s.Network}, s.Network != nil }},
	{"on_unavailable", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{OnUnavailable: s.OnUnavailable}, s.OnUnavailable != nil
	}},
	{"writable", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Writable: s.Writable}, s.Writable != nil
	}},
	{"hidden", func(s sandbox.Spec) (sandbox.Spec, bool) { return sandbox.Spec{Hidden: s.Hidden}, s.Hidden != nil }},
	{"allow_env_vars", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{AllowEnv: s.AllowEnv}, s.AllowEnv != nil
	}},
	{"limits.timeout", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{Timeout: s.Limits.Timeout}}, s.Limits.Timeout != 0
	}},
	{"limits.cpu_seconds", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{CPUSeconds: s.Limits.CPUSeconds}}, s.Limits.CPUSeconds != 0
	}},
	{"limits.address_space", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{AddressSpace: s.Limits.AddressSpace}}, s.Limits.AddressSpace != 0
	}},
	{"limits.open_files", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{OpenFiles: s.Limits.OpenFiles}}, s.Limits.OpenFiles != 0
	}},
	{"limits.processes", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{Processes: s.Limits.Processes}}, s.Limits.Processes != 0
	}},
	{"limits.output_bytes", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{OutputBytes: s.Limits.OutputBytes}}, s.Limits.OutputBytes != 0
	}},
	{"limits.tmp_size", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{TmpSize: s.Limits.TmpSize}}, s.Limits.TmpSize != 0
	}},
	{"limits.file_size", func(s sandbox.Spec) (sandbox.Spec, bool) {
		return sandbox.Spec{Limits: sandbox.Limits{FileSize: s.Limits.FileSize}}, s.Limits.FileSize != 0
	}},
}

// sandbox compiles a [sandbox] or [stages.sandbox] table at path (the keys are the host's, see
// hostconfig.CompileSandbox) and records where each setting is written, so that the check
// against the host, which needs both files, can point at it.
func (c *compiler) sandbox(path string, t *hostconfig.SandboxTable) sandbox.Spec {
	spec, errs := hostconfig.CompileSandbox(c.doc, path, t)
	c.errs = append(c.errs, errs...)
	for _, s := range sandboxSettings {
		key := path + "." + s.key
		line, col, ok := c.doc.Pos(key)
		if !ok {
			continue
		}
		if c.sandboxAt == nil {
			c.sandboxAt = make(map[string]tomlfile.Error)
		}
		c.sandboxAt[key] = tomlfile.Error{File: c.doc.File, Line: line, Column: col, Key: key}
	}
	return spec
}

// CheckSandboxCeiling reports every sandbox setting of the blueprint that would loosen host (the
// host's ceiling, hostconfig.Config.SandboxCeiling): each key of its [sandbox] is checked
// against host, and each key of a stage's [stages.sandbox] against host as the blueprint's
// [sandbox] tightens it. Each problem is positioned at the key in the blueprint file, names the
// layer, and wraps sandbox.ErrLoosens. Loaders call it once both files are known, since the host
// may come from a separate config file; nil means the blueprint only tightens.
func (b *Blueprint) CheckSandboxCeiling(host sandbox.Boundary) error {
	var errs tomlfile.Errors
	reporter := func(table, layer string) func(key string, err error) {
		return func(key string, err error) {
			full := table + "." + key
			e, ok := b.sandboxAt[full]
			if !ok {
				e = tomlfile.Error{File: b.Path, Key: full}
			}
			e.Err = fmt.Errorf("%s %w", layer, err)
			e.Msg = e.Err.Error()
			errs = append(errs, &e)
		}
	}
	outer := tightenLayer(host, b.Sandbox, reporter("sandbox", "blueprint [sandbox]"))
	for i := range b.Stages {
		layer := fmt.Sprintf("stage %q [stages.sandbox]", b.Stages[i].Name)
		tightenLayer(outer, b.Stages[i].Sandbox, reporter(tomlfile.JoinIndex("stages", i)+".sandbox", layer))
	}
	errs.Sort()
	return errs.Err()
}

// StageBoundary is the boundary the commands of an agent in stage (an index into b.Stages) run
// under: host, tightened by the blueprint's [sandbox], then by the stage's. A setting that would
// loosen its outer layer keeps the outer value (CheckSandboxCeiling has reported it at load), so
// the result is never looser than host. A stage outside b.Stages gets the blueprint's boundary.
// The result shares host's lists where no layer changes them; callers must not modify it.
func (b *Blueprint) StageBoundary(host sandbox.Boundary, stage int) sandbox.Boundary {
	outer := tightenLayer(host, b.Sandbox, nil)
	if stage < 0 || stage >= len(b.Stages) {
		return outer
	}
	return tightenLayer(outer, b.Stages[stage].Sandbox, nil)
}

// tightenLayer applies one layer's Spec to outer. When the layer only tightens that is one
// sandbox.Tighten; otherwise each setting is applied on its own, so every setting that tightens
// still does, and each one that would loosen keeps the outer value and goes to report (when not
// nil) with its key.
func tightenLayer(outer sandbox.Boundary, layer sandbox.Spec, report func(key string, err error)) sandbox.Boundary {
	b, err := sandbox.Tighten(outer, layer)
	if err == nil {
		return b
	}
	b = outer
	for _, s := range sandboxSettings {
		only, set := s.only(layer)
		if !set {
			continue
		}
		next, err := sandbox.Tighten(b, only)
		if err != nil {
			if report != nil {
				report(s.key, err)
			}
			continue
		}
		b = next
	}
	return b
}
