// Package version holds Warren's version, the one constant every trace header carries and
// `host --version` prints. It is its own package, importing nothing, so that the trace writer
// can stamp headers with it without importing the root package (which imports the trace).
package version

// Warren is the version of this tree of Warren. It is a constant, not the VCS revision, so a
// golden trace's header changes when the version is bumped on purpose, not with every commit;
// `host --version` adds the revision from the build information for a bug report. Bumping it
// means regenerating the golden traces (go test ./scenarios/ -update), which is the point: a
// trace says which release of the host wrote it.
const Warren = "0.14.0-dev"
