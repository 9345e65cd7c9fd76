package policy

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// shellArg is one word of a command as the program would receive it.
type shellArg struct {
	word *syntax.Word // nil for arguments a wrapper appends at run time (xargs)
	// val is the word after quote removal when static; otherwise the static text before its
	// first expansion.
	val    string
	static bool // the program receives exactly val
	single bool // the word becomes exactly one argument whatever its value
}

// runtimeArg stands for the arguments xargs appends to its command at run time.
var runtimeArg = shellArg{}

func staticArg(v string) shellArg { return shellArg{val: v, static: true, single: true} }

func (a shellArg) text() string {
	if a.word == nil {
		return "arguments supplied at run time"
	}
	return wordText(a.word)
}

// mayBeOption reports whether the argument could be an option of its program.
func (a shellArg) mayBeOption() bool {
	return strings.HasPrefix(a.val, "-") || (!a.static && a.val == "")
}

func wordText(w *syntax.Word) string {
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, w); err != nil {
		return "?"
	}
	return sb.String()
}

func (s *shellScan) args(words []*syntax.Word, ctx shellCtx) []shellArg {
	args := make([]shellArg, len(words))
	for i, w := range words {
		v, static, single := s.literal(w, ctx)
		args[i] = shellArg{word: w, val: v, static: static, single: single}
	}
	return args
}

// withToken marks the arguments holding a token a wrapper replaces at run time as not static,
// and returns the context its command runs in.
func withToken(args []shellArg, ctx shellCtx, token string) ([]shellArg, shellCtx) {
	marked := slices.Clone(args)
	for i := range marked {
		if strings.Contains(marked[i].val, token) {
			marked[i].static = false
		}
	}
	ctx.tokens = append(ctx.tokens[:len(ctx.tokens):len(ctx.tokens)], token)
	return marked, ctx
}

// literal evaluates a word as the shell would, without running anything. static reports that
// the word always becomes exactly val (quote removal, escapes and $'...' decoded); otherwise
// val is the static text before the first expansion. single reports that the word always
// becomes one argument. A leading unquoted ~ is kept as written.
func (s *shellScan) literal(w *syntax.Word, ctx shellCtx) (val string, static, single bool) {
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, "\\*?[{") {
			return lit.Value, !hasToken(lit.Value, ctx.tokens), true
		}
	}
	var sb strings.Builder
	single, prefix, braces := true, -1, false
	for _, part := range w.Parts {
		start, partStatic := sb.Len(), true
		switch p := part.(type) {
		case *syntax.Lit:
			braces = braces || strings.ContainsRune(p.Value, '{')
			if !unquotedLit(&sb, p.Value) {
				partStatic, single = false, false
			}
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v, partStatic = decodeANSI(v)
			}
			sb.WriteString(v)
		case *syntax.DblQuoted:
			partStatic = !p.Dollar // $"..." is translated by a message catalogue
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					unescape(&sb, lit.Value, "$`\"\\\n")
					continue
				}
				partStatic = false
				if pe, ok := q.(*syntax.ParamExp); ok && manyFields(pe) {
					single = false
				}
			}
		case *syntax.ProcSubst:
			sb.WriteString("/dev/fd/") // one path, of a pipe: never an option
			start, partStatic = sb.Len(), false
		default: // unquoted expansions split into any number of fields
			partStatic, single = false, false
		}
		if !partStatic && prefix < 0 {
			prefix = start
		}
	}
	if braces && single && splitsBraces(w) {
		prefix, single = 0, false
	}
	val = sb.String()
	if prefix >= 0 {
		return val[:prefix], false, single
	}
	return val, !hasToken(val, ctx.tokens), single
}

// unquotedLit writes an unquoted literal after quote removal and reports whether it is
// static: glob characters make it a pattern.
func unquotedLit(sb *strings.Builder, v string) bool {
	for j := 0; j < len(v); j++ {
		c := v[j]
		switch c {
		case '\\':
			if j+1 < len(v) {
				j++
				c = v[j]
				if c == '\n' {
					continue
				}
			}
		case '*', '?':
			return false
		case '[':
			if strings.IndexByte(v[j+1:], ']') >= 0 {
				return false
			}
		}
		sb.WriteByte(c)
	}
	return true
}

// decodeANSI decodes $'...' as bash does, cutting at a NUL; \c sequences, which the library
// does not decode as bash does, make the word not static.
func decodeANSI(v string) (string, bool) {
	if strings.Contains(v, `\c`) {
		return "", false
	}
	out, _, err := expand.Format(nil, v, nil)
	if err != nil {
		return "", false
	}
	out, _, _ = strings.Cut(out, "\x00")
	return out, true
}

func manyFields(pe *syntax.ParamExp) bool {
	if pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*" && pe.Index != nil) {
		return true
	}
	if w, ok := pe.Index.(*syntax.Word); ok && w.Lit() == "@" {
		return true
	}
	return pe.Names == syntax.NamesPrefixWords
}

// splitsBraces reports whether bash brace expansion applies to the word ({a,b}, {1..3}).
func splitsBraces(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	syntax.SplitBraces(cp) // it reports true for any '{', expansion or not
	return slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

func hasToken(v string, tokens []string) bool {
	for _, t := range tokens {
		if strings.Contains(v, t) {
			return true
		}
	}
	return false
}

// systemDirs hold the programs a bare name finds; a program named by another path also gets a
// path key, because a file there may be one the agent wrote.
var systemDirs = map[string]bool{
	"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true,
}

// program turns a static command word into the program name of its key, adding a path key for
// a program outside the system directories; "" when it cannot be a key.
func (s *shellScan) program(word string) string {
	if word == "." {
		return "source"
	}
	if strings.HasPrefix(word, "~") && !strings.Contains(word, "/") {
		s.fail("the program name is computed (%s)", word)
		return ""
	}
	if !strings.Contains(word, "/") {
		if !validName(word) || word == ".." {
			s.fail("the program name %q cannot be a key", word)
			return ""
		}
		return word
	}
	clean := path.Clean(word)
	name := path.Base(clean)
	if !validName(clean) || name == "." || name == ".." || name == "/" {
		s.fail("the program path %q cannot be a key", word)
		return ""
	}
	if !systemDirs[path.Dir(clean)] {
		if !path.IsAbs(clean) && !strings.HasPrefix(clean, "../") && !strings.HasPrefix(clean, "~") {
			clean = "./" + clean
		}
		s.addOpaque(shellPrefix+clean, whyPath)
	}
	return name
}

// validName reports whether a program, subcommand or target can stand in a key: no blank,
// control character or '=', and not starting with '>'.
func validName(v string) bool {
	if v == "" || v[0] == '>' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f || c == '=' {
			return false
		}
	}
	return true
}
