package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
)

// The file tools are exactly-once across a crash of their host (host run --state, killed, then
// host resume): a call that was running when the host died is neither answered "may or may not
// have happened" nor run twice. Before it changes anything, write_file or edit_file journals an
// Expectation (the file it will change, a hash of what the file holds now, a hash of what it
// will hold, and the result text it will answer), synced, through ExecContext.Journal; then it
// makes the change atomic: the new content goes to a temporary file in the same folder, renamed
// over the target. A resume that finds the call's intent without its result reads the target
// (CheckEffect): holding the new content, the call happened and its journaled result is the
// answer; holding the old, it did not, and it runs now with the same result; holding anything
// else, something other than the call changed the file and the answer is the documented
// "interrupted" one. The checklist and memory tools need none of this: their effect is world data,
// which a resume restores and replays, so they run again deterministically.

// ExactlyOnce is implemented by a tool whose only effect is one workdir file's content, which it
// journals (ExecContext.Journal) before making it: the host then settles a call a crash cut off
// by looking at that file instead of answering it as interrupted.
type ExactlyOnce interface {
	// JournalsEffect marks the tool; it has no behaviour.
	JournalsEffect()
}

// EffectRecorder is how an ExactlyOnce tool's call journals its effect (ExecContext.Journal):
// the host's effect journal of a run with a state directory, nil elsewhere.
type EffectRecorder interface {
	// Expect journals the call's intent with what its effect will be, and returns once that is on
	// disk; the tool changes nothing before, and nothing at all when it fails.
	Expect(x Expectation) error
	// Applying is called once the new content is written to its temporary file and before it is
	// renamed over the target: a durability test's kill switch sits there (mid-write).
	Applying()
}

// Expectation is what an ExactlyOnce call's effect will be, journaled with its intent.
type Expectation struct {
	// Target is the file, relative to the agent's workdir.
	Target string `json:"target"`
	// Prior is the hash of the target's content before the call (ContentHash), "" when it did not
	// exist; Next the hash of its content after.
	Prior string `json:"prior,omitempty"`
	Next  string `json:"next"`
	// Temp is the temporary file the new content is written to before its rename (relative to
	// the workdir; "" for a write in place, through a link), removed by a resume if a crash left it.
	Temp string `json:"temp,omitempty"`
	// Result is the call's result text when it succeeds, and Charged the bytes it charges the
	// agent's write budget.
	Result  string `json:"result"`
	Charged int64  `json:"charged,omitempty"`
}

// EffectOutcome is what CheckEffect found of a journaled Expectation.
type EffectOutcome uint8

const (
	// EffectUnknown: the target holds neither the content before nor the content after (something
	// else changed it, or a write in place was cut off), or it cannot be read.
	EffectUnknown EffectOutcome = iota
	// EffectHappened: the target holds the new content.
	EffectHappened
	// EffectNotHappened: the target is as it was before the call.
	EffectNotHappened
)

// String names the outcome.
func (o EffectOutcome) String() string {
	switch o {
	case EffectHappened:
		return "happened"
	case EffectNotHappened:
		return "not happened"
	}
	return "unknown"
}

// ContentHash is the hash an Expectation gives a file's content: "sha256:" and its hex digest.
func ContentHash(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// tempName matches the base name of the temporary files the file tools write: a resume removes
// a journaled Temp only when it is one of them, so a tampered journal cannot have it remove an
// agent's file.
var tempName = regexp.MustCompile(`^\.warren-[0-9a-f]{16}\.tmp$`)

// tempFor is the temporary file of the call callID of agent for the target rel: in rel's folder
// (a rename stays on one filesystem), hidden, and the same on every try of the call, so that a
// retry after a crash overwrites what the crash left.
func tempFor(rel, agent, callID string) string {
	sum := sha256.Sum256([]byte(agent + "\x00" + callID + "\x00" + rel))
	return filepath.Join(filepath.Dir(rel), ".warren-"+hex.EncodeToString(sum[:8])+".tmp")
}

// CheckEffect reads the target of x in the agent workdir at workdir (absolute) and says whether
// the effect x journals happened, removing the temporary file a crash between its write and its
// rename left. A workdir that is not there yet holds no file.
func CheckEffect(workdir string, x Expectation) EffectOutcome {
	root, err := OpenWorkdir(workdir)
	var current string
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		current = ""
	case err != nil:
		return EffectUnknown
	default:
		defer root.Close()
		if x.Temp != "" && filepath.IsLocal(x.Temp) && tempName.MatchString(filepath.Base(x.Temp)) {
			_ = root.Remove(x.Temp) // a crash between write and rename left it; it is the host's
		}
		rel := filepath.Clean(x.Target)
		if !filepath.IsLocal(rel) {
			return EffectUnknown
		}
		var exists bool
		if current, exists, err = hashFile(root, rel); err != nil {
			return EffectUnknown
		} else if !exists {
			current = ""
		}
	}
	switch current {
	case x.Next:
		return EffectHappened
	case x.Prior:
		return EffectNotHappened
	}
	return EffectUnknown
}

// hashFile is the ContentHash of the regular file rel in root (links inside root followed), and
// whether it exists.
func hashFile(root *os.Root, rel string) (string, bool, error) {
	f, _, err := openRegular(root, rel, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", true, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), true, nil
}

// fileWrite is how a file tool's call writes rel's whole new content: atomically (a temporary
// file renamed over it) when rel is missing or a plain file of one name, in place otherwise (a
// symbolic link, whose target the write goes to, or a hard link, whose other names see the
// change, as they always did).
type fileWrite struct {
	root    *os.Root
	rel     string
	content string
	// prior is what is at rel now (nil: nothing); inPlace says the write goes through it.
	prior   fs.FileInfo
	inPlace bool
	temp    string
	owner   *FileOwner
}

// planWrite looks at rel (with Lstat) and says how its write goes.
func planWrite(ec *ExecContext, root *os.Root, rel, content string, prior fs.FileInfo) *fileWrite {
	w := &fileWrite{root: root, rel: rel, content: content, prior: prior, owner: ec.FileOwner}
	if prior != nil && (prior.Mode()&fs.ModeSymlink != 0 || !soleName(prior)) {
		w.inPlace = true
		return w
	}
	w.temp = tempFor(rel, ec.Agent.Name, ec.CallID)
	return w
}

// expect is the call's Expectation: priorHash is the hash of rel's content now ("": none).
func (w *fileWrite) expect(priorHash, result string, charged int64) Expectation {
	return Expectation{Target: filepath.ToSlash(w.rel), Prior: priorHash, Next: ContentHash([]byte(w.content)),
		Temp: filepath.ToSlash(w.temp), Result: result, Charged: charged}
}

// apply writes the content: in place through one handle, or to the temporary file (the prior
// file's permissions and owner carried over, a new file handed to the owner), then renamed over
// rel once journal's Applying has been told.
func (w *fileWrite) apply(journal EffectRecorder) error {
	if w.inPlace {
		return writeWhole(w.root, w.rel, w.content, false, w.owner)
	}
	// A temporary file a crash left is the host's own: removed, so the exclusive create below
	// never follows a link an agent put in its place.
	if err := w.root.Remove(w.temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	perm := fs.FileMode(0o644)
	if w.prior != nil {
		perm = w.prior.Mode().Perm()
	}
	f, err := w.root.OpenFile(w.temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = f.WriteString(w.content)
	if err == nil && w.prior != nil {
		err = f.Chmod(perm) // the umask does not narrow a replaced file's permissions
	}
	if err == nil && w.owner != nil {
		uid, gid := w.owner.UID, w.owner.GID
		if w.prior != nil {
			if st, ok := w.prior.Sys().(*syscall.Stat_t); ok {
				uid, gid = int(st.Uid), int(st.Gid) // a replaced file keeps its owner
			}
		}
		err = f.Chown(uid, gid)
	}
	if err = errors.Join(err, f.Close()); err != nil {
		_ = w.root.Remove(w.temp)
		return err
	}
	if journal != nil {
		journal.Applying()
	}
	if err := w.root.Rename(w.temp, w.rel); err != nil {
		_ = w.root.Remove(w.temp)
		return err
	}
	return nil
}
