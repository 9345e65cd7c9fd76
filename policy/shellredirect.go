package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// redirect scans one redirection: output to a file gives a key.
func (s *shellScan) redirect(r *syntax.Redirect, ctx shellCtx) {
	if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
		s.heredocEnd(r)
		if !quotedDelimiter(r.Word) {
			s.word(r.Hdoc, ctx)
		}
		return
	}
	s.word(r.Word, ctx)
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		s.setVar(strings.Trim(r.N.Value, "{}"), true)
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		s.writeTarget(r.Word, ctx)
	case syntax.DplOut:
		if v, static, _ := s.literal(r.Word, ctx); static && isDescriptor(v) {
			return
		}
		s.writeTarget(r.Word, ctx) // bash's >&file writes file
	case syntax.RdrIn:
		switch v, static, _ := s.literal(r.Word, ctx); {
		case static && isNetworkPath(CleanTarget(v)):
			s.targetKey(v)
		case !static && mayBeNetworkPath(v):
			s.fail("the input redirect target is computed and could be a /dev/tcp connection (%s)", wordText(r.Word))
		}
	}
}

// heredocEnd refuses a here-document whose end bash may find on another line than the parser: a
// line of it that ends with a backslash, which bash joins with the next line before it compares
// that with the delimiter (so a lone "\" before the delimiter line ends the here-document one
// line early), unless the delimiter is plainly quoted ('EOF', "EOF", \EOF), where neither joins
// lines. Inside `...`, where bash first removes a level of backslashes, any such line is refused.
// TestHeredocBoundaries holds the analysis to bash's reading.
//
// The text checked runs from the operator to the end of the text the parser took for the
// here-document (to the end of the source when it took none): the parser drops a backslash and
// newline before it starts the text, so the line that misleads it lies before that text.
func (s *shellScan) heredocEnd(r *syntax.Redirect) {
	start, end := int(r.OpPos.Offset()), len(s.src)
	if r.Hdoc != nil {
		end = int(r.Hdoc.End().Offset())
	}
	if start < 0 || end > len(s.src) || start > end {
		s.fail("a here-document's text could not be located in the line")
		return
	}
	if s.substs > 0 {
		// Inside $( ), bash also ends a here-document at a line that starts with the delimiter
		// and goes on (EOF) closes both), which the parser reads as text.
		delim, _, _ := s.literal(r.Word, shellCtx{})
		for line := range strings.Lines(s.src[start:end]) {
			line = strings.TrimSuffix(line, "\n")
			if r.Op == syntax.DashHdoc {
				line = strings.TrimLeft(line, "\t")
			}
			if delim != "" && strings.HasPrefix(line, delim) && line != delim {
				s.fail("a line of the here-document inside a substitution starts with its delimiter (%s), so bash may end the here-document on another line than this check reads", delim)
				return
			}
		}
	}
	if s.backquotes == 0 && plainlyQuoted(r.Word) {
		return
	}
	for line := range strings.Lines(s.src[start:end]) {
		if strings.HasSuffix(strings.TrimSuffix(line, "\n"), "\\") {
			s.fail("a line of the here-document ends with a backslash, so bash may end the here-document on another line than this check reads")
			return
		}
	}
}

// plainlyQuoted reports whether a here-document's delimiter is quoted as a whole: one '...' or
// "..." part, or a word starting with a backslash.
func plainlyQuoted(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.SglQuoted:
		return !p.Dollar
	case *syntax.DblQuoted:
		return !p.Dollar
	case *syntax.Lit:
		return strings.HasPrefix(p.Value, "\\")
	}
	return false
}

// networkDirs are the paths bash turns into connections in a redirection.
var networkDirs = [...]string{"/dev/tcp/", "/dev/udp/"}

// isNetworkPath reports whether bash opens a connection for this redirect target: even for
// reading, that reaches the network, so it gives a redirect key like a write.
func isNetworkPath(v string) bool {
	for _, dir := range networkDirs {
		if strings.HasPrefix(v, dir) {
			return true
		}
	}
	return false
}

// mayBeNetworkPath reports whether a computed target whose static text is prefix could name a
// connection.
func mayBeNetworkPath(prefix string) bool {
	for _, dir := range networkDirs {
		if strings.HasPrefix(dir, prefix) || strings.HasPrefix(prefix, dir) {
			return true
		}
	}
	return false
}

func (s *shellScan) writeTarget(w *syntax.Word, ctx shellCtx) {
	v, static, _ := s.literal(w, ctx)
	switch {
	case !static:
		s.fail("the redirect target is computed (%s)", wordText(w))
	case v == "":
		s.fail("a redirect has an empty target")
	default:
		s.targetKey(v)
	}
}

// isDescriptor reports whether a >& target duplicates or closes a descriptor (2, 2-, -).
func isDescriptor(v string) bool {
	v = strings.TrimSuffix(v, "-")
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

func quotedDelimiter(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return true
			}
		}
	}
	return false
}

// stdinOf reports what a redirection makes standard input, if it is one of fd 0.
func (s *shellScan) stdinOf(r *syntax.Redirect, ctx shellCtx) (stdinSource, bool) {
	if r.N != nil && r.N.Value != "0" {
		return stdinSource{}, false
	}
	switch r.Op {
	case syntax.RdrIn, syntax.RdrInOut:
		if _, static, _ := s.literal(r.Word, ctx); static {
			return stdinSource{kind: stdinFile}, true
		}
	case syntax.Hdoc, syntax.DashHdoc:
		if text, ok := heredocText(r); ok {
			return stdinSource{kind: stdinText, text: text}, true
		}
	case syntax.WordHdoc:
		if v, static, _ := s.literal(r.Word, ctx); static {
			return stdinSource{kind: stdinText, text: v + "\n"}, true
		}
	case syntax.DplIn:
	default:
		if r.N == nil {
			return stdinSource{}, false
		}
	}
	return stdinSource{}, true
}

// heredocText returns a here-document's text when no expansion changes it.
func heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := quotedDelimiter(r.Word)
	var sb strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			sb.WriteString(lit.Value)
			continue
		}
		unescape(&sb, lit.Value, "$`\\\n")
	}
	return sb.String(), true
}

// unescape writes v dropping each backslash that quotes one of special (a quoted newline
// disappears with its backslash), as bash does inside double quotes and here-documents.
func unescape(sb *strings.Builder, v, special string) {
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte(special, v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(v[i])
	}
}
