package policy

import (
	"slices"
	"strings"
)

// optSpec describes a program's options as its getopt call does.
type optSpec struct {
	short string   // "x" a flag, "x:" takes a value, "x::" takes an optional attached value
	long  []string // "name" a flag, "name=" takes a value, "name?" takes an optional "=value"
}

// options consumes the options at the start of args and returns the words from the first
// operand on; end reports that "--" ended the options. onOpt sees each option ("-u",
// "--user") with its value (the zero shellArg when it has none). An unknown option, or a
// computed word that could be one, fails: read wrongly, an option's value could be taken for
// the wrapped program or the other way round.
func (s *shellScan) options(prog string, args []shellArg, spec *optSpec, onOpt func(opt string, val shellArg)) (rest []shellArg, end bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if a.mayBeOption() {
				s.fail("an argument of %s that could be an option is computed (%s)", prog, a.text())
				return nil, false
			}
			return args[i:], false
		}
		v := a.val
		switch {
		case v == "--":
			return args[i+1:], true
		case len(v) < 2 || v[0] != '-':
			return args[i:], false
		case v[1] == '-':
			name, val, eq := strings.Cut(v[2:], "=")
			kind, known := longKind(spec.long, name)
			switch {
			case !known:
				s.fail("%s has an option this check does not know (--%s)", prog, name)
			case kind == '=' && !eq:
				if i+1 >= len(args) || !args[i+1].single {
					s.fail("the value of %s --%s is missing or computed", prog, name)
					return nil, false
				}
				i++
				onOpt(v, args[i])
			case kind == 0 && eq:
				s.fail("%s --%s takes no value", prog, name)
			case eq:
				onOpt(v[:2+len(name)], staticArg(val))
			default:
				onOpt(v, shellArg{})
			}
		default:
			i = s.shortOptions(prog, args, i, spec.short, onOpt)
		}
		if s.failed() {
			return nil, false
		}
	}
	return nil, false
}

// shortOptions reads one cluster of short options and returns the index of the last word used.
func (s *shellScan) shortOptions(prog string, args []shellArg, i int, short string, onOpt func(string, shellArg)) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		k := strings.IndexByte(short, v[j])
		if k < 0 || v[j] == ':' || v[j] >= 0x80 {
			s.fail("%s has an option this check does not know (-%c)", prog, v[j])
			return i
		}
		opt := shortOptNames[v[j]] // ASCII: the spec holds nothing else
		switch {
		case strings.HasPrefix(short[k+1:], "::"):
			onOpt(opt, staticArg(v[j+1:]))
			return i
		case strings.HasPrefix(short[k+1:], ":"):
			switch {
			case j+1 < len(v):
				onOpt(opt, staticArg(v[j+1:]))
			case i+1 < len(args) && args[i+1].single:
				i++
				onOpt(opt, args[i])
			default:
				s.fail("the value of %s %s is missing or computed", prog, opt)
			}
			return i
		default:
			onOpt(opt, shellArg{})
		}
	}
	return i
}

// longKind finds a long option: kind is '=' when it takes a value, '?' when the value is
// optional, 0 for a flag.
func longKind(long []string, name string) (kind byte, known bool) {
	for _, opt := range long {
		base := strings.TrimRight(opt, "=?")
		if base == name {
			if len(base) < len(opt) {
				return opt[len(base)], true
			}
			return 0, true
		}
	}
	return 0, false
}

// shortOptNames holds "-x" for every ASCII byte, so option callbacks get names without
// allocating.
var shortOptNames = func() (names [128]string) {
	for c := range names {
		names[c] = "-" + string(rune(c))
	}
	return names
}()

// optionRule lists, for a program that only reads unless told otherwise, the options that make
// it write a file or run a program, and the options whose value is the next word (so that a
// computed value there is not taken for an option).
type optionRule struct {
	shortValues   string            // short options whose value is attached or the next word
	shortOptional string            // short options whose value can only be attached
	longValues    []string          // long options whose value follows '=' or is the next word
	actions       map[string]string // option ("-s", "--set") → the action key's subcommand part
	writes        []string          // options whose value is a file they write
}

var readOnlyRules = map[string]*optionRule{
	"rg": {shortValues: "ABCEMTdefgjmrt", longValues: []string{"regexp", "file", "glob", "iglob",
		"type", "type-not", "after-context", "before-context", "context", "max-count",
		"max-columns", "threads", "replace", "encoding", "max-depth", "sort", "sortr", "color",
		"colors", "type-add", "type-clear", "max-filesize", "path-separator", "context-separator",
		"field-match-separator", "field-context-separator", "engine", "dfa-size-limit",
		"regex-size-limit", "ignore-file", "pre-glob", "pre", "hostname-bin"},
		actions: map[string]string{"--pre": "--pre", "--hostname-bin": "--hostname-bin"}},
	"date": {shortValues: "dfrs", shortOptional: "I", longValues: []string{"date", "file", "reference", "set"},
		actions: map[string]string{"-s": "--set", "--set": "--set"}},
	"file": {shortValues: "efFmP", longValues: []string{"exclude", "exclude-quiet", "files-from",
		"separator", "magic-file", "parameter"}, actions: map[string]string{"-C": "-C", "--compile": "-C"}},
	"tree": {shortValues: "HILPT", longValues: []string{"charset", "filelimit", "timefmt", "sort",
		"hintro", "houtro"}, actions: map[string]string{"-R": "-R"}, writes: []string{"-o"}},
}

var gitOutputRule = optionRule{shortValues: "GLnOS", longValues: []string{"max-count", "skip",
	"since", "after", "until", "before", "author", "committer", "grep", "grep-reflog",
	"min-parents", "max-parents", "encoding"}, writes: []string{"--output"}}

// gitOutputCommands are the git subcommands whose --output FILE writes a file.
var gitOutputCommands = map[string]bool{"log": true, "show": true, "diff": true, "whatchanged": true,
	"diff-tree": true, "diff-index": true, "diff-files": true, "range-diff": true, "format-patch": true}

// checkOptions scans the arguments of a program that reads unless an option says otherwise.
// Long options match by unambiguous prefix, as GNU getopt accepts them.
func (s *shellScan) checkOptions(prog, keyProg string, rule *optionRule, args []shellArg) {
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		if !a.static {
			if a.mayBeOption() && (i == 0 || !rule.takesValue(args[i-1])) {
				s.fail("an argument of %s is computed and could be an option that writes or runs a program (%s)", prog, a.text())
			}
			continue
		}
		v := a.val
		switch {
		case v == "--":
			return
		case len(v) < 2 || v[0] != '-':
		case v[1] == '-':
			name, val, eq := strings.Cut(v[2:], "=")
			for opt, action := range rule.actions {
				if abbreviates(name, opt) {
					s.add(ProgramKey(keyProg, action))
				}
			}
			for _, opt := range rule.writes {
				if len(name) >= 2 && abbreviates(name, opt) {
					if eq {
						s.writeFile(prog, staticArg(val))
					} else if i+1 < len(args) {
						i++
						s.writeFile(prog, args[i])
					}
				}
			}
			if !eq && slices.Contains(rule.longValues, name) {
				i++
			}
		default:
			i = s.shortCluster(prog, keyProg, rule, args, i)
		}
	}
}

// shortCluster scans one cluster of short options (-abc) and returns the index of the last word
// it used.
func (s *shellScan) shortCluster(prog, keyProg string, rule *optionRule, args []shellArg, i int) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		if v[j] >= 0x80 {
			continue // not an option letter
		}
		opt := shortOptNames[v[j]]
		if action, ok := rule.actions[opt]; ok {
			s.add(ProgramKey(keyProg, action))
		}
		switch {
		case slices.Contains(rule.writes, opt):
			if j+1 < len(v) {
				s.writeFile(prog, staticArg(v[j+1:]))
			} else if i+1 < len(args) {
				i++
				s.writeFile(prog, args[i])
			}
			return i
		case strings.IndexByte(rule.shortOptional, v[j]) >= 0:
			return i
		case strings.IndexByte(rule.shortValues, v[j]) >= 0:
			if j+1 == len(v) {
				i++
			}
			return i
		}
	}
	return i
}

func (r *optionRule) takesValue(prev shellArg) bool {
	p := prev.val
	switch {
	case !prev.static || len(p) < 2 || p[0] != '-':
		return false
	case p[1] == '-':
		return slices.Contains(r.longValues, p[2:])
	default:
		return len(p) == 2 && strings.IndexByte(r.shortValues, p[1]) >= 0
	}
}

// abbreviates reports whether the long option name (without dashes) is a prefix of opt
// ("--set").
func abbreviates(name, opt string) bool {
	return name != "" && strings.HasPrefix(opt, "--") && strings.HasPrefix(opt[2:], name)
}

func (s *shellScan) writeFile(prog string, a shellArg) {
	switch {
	case !a.static:
		s.fail("the file %s writes is computed (%s)", prog, a.text())
	case a.val == "":
		s.fail("%s writes a file with an empty name", prog)
	default:
		s.targetKey(a.val) // the program runs in the shell's folder
	}
}
