package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// redirect scans one redirection: output to a file gives a key.
func (s *shellScan) redirect(r *syntax.Redirect, ctx shellCtx) {
	if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
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
			s.add(RedirectKey(CleanTarget(v)))
		case !static && mayBeNetworkPath(v):
			s.fail("the input redirect target is computed and could be a /dev/tcp connection (%s)", wordText(r.Word))
		}
	}
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
	case CleanTarget(v) != "/dev/null":
		s.add(RedirectKey(CleanTarget(v)))
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
