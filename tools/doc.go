// Package tools defines what a Warren agent can call: the Tool interface, the ExecContext a call
// runs with, the base Registry and the ScopedToolRegistry (a LIFO stack of scopes over the base,
// higher scopes shadowing lower ones by name), the registry of built-in tools, the TaskBroker
// behind the checklist tools, the WriteBudget behind the file-writing tools, and eleven built-in
// tools: read_file, write_file, edit_file, list_dir, shell, todo_add, todo_done, todo_list,
// ask_user_text, ask_user_choice and ask_user_confirm. Of Warren it imports only policy (the shell
// tool reads its line's redirect keys), sandbox (the shell tool's command runner) and
// internal/safepath (the workdir walk), and nothing of the ECS, so every tool is testable without
// a world.
//
// # The built-in registry
//
// Built-in tools register themselves, Caddy style: the file that defines a tool calls
// RegisterBuiltin from its init function with a BuiltinInfo, an id and a constructor, and keeps a
// compile-time guard (var _ Tool = ReadFile{}) beside the type. An id is "<namespace>.<name>":
// the namespace is the defining package ("tools.read_file", "subagents.spawn_agent"), the name is
// exactly the tool's Spec().Name, which is what models, blueprints, permissions and traces use, so
// names are unique across namespaces. RegisterBuiltin panics on a malformed id, a nil tool, a
// name that is not the tool's, or a clash, so a bad registration stops the binary at start.
//
// BuiltinInfos, LookupBuiltin, BuiltinsIn and RegisterBuiltinsIn read the registry, every listing
// sorted by id, so the order packages and files register in never shows. Builtins and
// RegisterBuiltins are those for namespace "tools" (Namespace); package subagents offers Tools and
// Register for its own. Within one namespace id order is name order. docs/tools.md's tables of
// built-ins are generated from the registry and checked by TestDocsListBuiltinTools (and
// subagents' TestDocsListSubagentTools); go test -update rewrites them.
//
// # Calls
//
// A call is resolved by name (Registry.Lookup or ScopedToolRegistry.Lookup, top scope first),
// validated against the tool's JSON Schema (compiled once, at registration) and executed with an
// ExecContext. Any error is shown to the agent as ErrorResult(err): the error's message with
// IsError set. Validation errors read like
//
//	invalid arguments for tool "read_file": at (root): missing property 'path'; at /offset: got string, want integer
//
// with one "at <JSON pointer>: <reason>" per problem, sorted, at most 8 (then "; and N more").
// Empty arguments count as {}.
//
// # Built-in tool results
//
// Paths in results and errors are shown exactly as the agent gave them (%q-quoted where noted),
// never as host paths, so results are identical wherever a run lives.
//
// read_file {path, offset?, limit?}: the file's text verbatim. When a window was requested
// (offset > 1 or limit set) or something was cut, a note on its own line follows:
//
//	[showed lines A-B; end of file]
//	[showed lines A-B; more lines follow; continue with offset=N]
//	[truncated: output is capped at 262144 bytes; showed lines A-B; U bytes of the file not shown; continue with offset=N]
//	[truncated: line A is longer than the 262144-byte read cap; showed its first K bytes; U bytes of the file not shown; continue with offset=N]
//
// An empty file reads as "[empty file]". Errors: `invalid arguments: offset N is past the end of
// "p" (it has L lines)`; `cannot read "p": not a regular file (it is a directory; use list_dir)`;
// `cannot read "p": no such file or directory` (and other OS reasons, phrased by the OS).
//
// write_file {path, content}: `Wrote N bytes to "p" (new file)` or `Wrote N bytes to "p"
// (replaced the previous content)`. Missing parent directories are created. Writing onto a
// directory fails with `cannot write "p": is a directory`, onto a FIFO, socket or device with
// `cannot write "p": not a regular file` (it is never opened: a FIFO would block the call).
//
// edit_file {path, old_string, new_string, replace_all?}: `Replaced 1 occurrence in "p"` or
// `Replaced N occurrences in "p"`. Errors: `cannot edit "p": old_string not found (it must match
// the file's text exactly, whitespace included)`; `cannot edit "p": old_string is not unique: it
// occurs N times (add surrounding text to make it unique, or set replace_all to replace every
// occurrence)`; `invalid arguments: old_string and new_string are identical, so the edit would
// change nothing`; `cannot edit "p": file is too large (S bytes; edit_file handles at most
// 4194304)`.
//
// list_dir {path?}: one entry per line, sorted by name (byte order), directories suffixed "/";
// "(empty directory)" for none; after 1000 entries a last line "[N more entries not shown]".
// Error: `cannot list "p": not a directory`.
//
// Errors common to the file tools: `invalid arguments: path is empty`; `invalid arguments: path
// "p" contains a NUL byte`; `no usable workdir: the call has no workdir` (or `: the workdir must
// be an absolute path`, `: cannot create the workdir: <reason>`, `: cannot open the workdir:
// <reason>`, `: the workdir's path goes through a symbolic link, which the host does not follow`
// for a workdir, or a folder on the way to it, that is a link: see OpenWorkdir); `cancelled:
// context canceled` when the call was cancelled before it started. The shell tool refuses to run a
// command in such a workdir too (`shell: the command cannot start: no usable workdir: ...`).
//
// Confinement errors (all file tools): `"p": path is outside the workdir` for ".." and absolute
// paths outside the workdir, and `cannot <verb> "p": path is outside the workdir (a symbolic link
// or '..' leads out of it)` when a symlink inside the workdir points out of it. An absolute path
// inside the workdir is accepted.
//
// shell {command, timeout_seconds?, background?}: runs the line with bash in the agent's sandbox
// (ExecContext.Commands), the workdir its current directory, and returns the output (stdout and
// stderr together, invalid UTF-8 replaced; past the sandbox's cap a line "[output cut: N more
// bytes not shown]") then one of "[exit code N]", "[killed: the command ran past its timeout]",
// "[killed: the call was cancelled]" or "[ended by signal: S]". Anything but exit code 0 is an
// error result. timeout_seconds is 1 to 3600, never past the sandbox's own timeout. With
// background set it returns at once, "Started in the background; its output and exit code will
// reach your inbox when it ends.", and the host later delivers "[background command finished]
// <line>" and the outcome. Errors: ErrNoSandbox (`this call has no sandbox to run commands in`)
// without a command runner; `shell: the command cannot start: <reason>` for an unusable workdir
// or a sandbox that refuses. Files the line writes by redirect are charged to the write budget
// once it ends; over the budget they are cut back and the result says so. The boundary the
// command ran under is a "sandbox" note, which the trace records.
//
// todo_add {text}: `Added task N: text` (whitespace runs in text collapse to one space).
// todo_done {id}: `Completed task N: text`, or `Task N was already done: text`; an unknown id is
// the error `task N: no such task (the checklist has tasks 1-L)`. todo_list {}: "The checklist is
// empty." or
//
//	Checklist (D of T done):
//	[x] 1. first task
//	[ ] 2. second task
//
// Without a TaskBroker every checklist tool returns NoChecklistText (not an error). A full
// checklist (MaxTasksPerAgent tasks) is the error `the checklist already holds 256 tasks:
// checklist is full`.
//
// # Write budget
//
// ExecContext.Writes is the agent run's WriteBudget: a per-call and a per-run ceiling in bytes (0
// = none) and the running total, shared by every call of the run. write_file charges
// len(content) and edit_file the size of the whole new file, both before touching the disk, so a
// refused write leaves the file (and any missing parent directories) as they were; a write that
// fails after being charged is refunded, so Spent is what was actually written. Refusals wrap
// ErrWriteBudget and read
//
//	write refused: N bytes exceed the per-call write budget of C bytes
//	write refused: N bytes would exceed the per-run write budget of R bytes (L bytes left)
//
// A nil budget (headless) charges nothing and never refuses.
//
// # Interaction tools
//
// ask_user_text {question}, ask_user_choice {question, choices} (2-20 distinct non-blank strings,
// in display order) and ask_user_confirm {question} ask a person. They implement Interactive: with
// an interaction hub attached, the host parks the agent and calls Question and Answer instead of
// Execute. Results:
//
//	ask_user_text:    The user answered: <answer, verbatim>
//	ask_user_choice:  The user chose: <choice>
//	ask_user_confirm: The user answered yes.   /   The user answered no.
//
// Answers: ask_user_text takes any non-blank text; ask_user_choice exactly one of the choices
// (case-sensitive, no trimming); ask_user_confirm yes, y, true, no, n or false in any case, with
// surrounding whitespace ignored. Anything else is an error wrapping ErrInvalidAnswer:
// `invalid answer: the answer is blank`; `invalid answer: "x" is not one of the choices ("a",
// "b"); the answer must match a choice exactly, case included`; `invalid answer: "x" is not yes
// or no (accepted, in any case: yes, y, true, no, n, false)`.
//
// Execute is the headless path (a tool run outside a world, where no hub parks the call): it
// checks the question and returns UnattendedAnswer:
//
//	No one is available to answer right now. Proceed with your best judgment and say which assumptions you made.
//
// A blank question (or choice) is the error `invalid arguments: question is blank` (`choice N is
// blank`).
package tools
