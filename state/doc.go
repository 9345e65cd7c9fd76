// Package state is a run's state directory (host run --state DIR, host resume DIR): what a run
// that dies (SIGKILL, an OOM kill, a power cut) or is stopped leaves behind so that it can go on
// where it was.
//
// A directory holds:
//
//   - state.db, a bbolt database (chosen by measurement: docs/decisions.md) with the run's
//     description (Meta: the host version, the scenario and how it was launched, its status), the
//     last commit (Commit: the last tick whose trace and recording are durable, and how long they
//     were then) and the effect journal (Effects: every side-effecting call's intent, synced before
//     the call runs, and its result, synced when it returns);
//   - trace.jsonl and recording.jsonl, the run's trace and recording, appended as the run goes and
//     made durable at each commit;
//   - work/, the agents' workdirs (unless the run named its own).
//
// A resume replays the recording's committed part (the world is a function of its scenario, seed
// and recorded inputs), checking that it writes the committed trace and recording again byte for
// byte (Appender), then goes on live. The lifecycle is Create (a new run) or Open (a resume or an
// inspection), then Commit at tick boundaries, then Finish or Stop, then Close.
package state
