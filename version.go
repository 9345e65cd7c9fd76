package warren

import "github.com/warrenhq/warren/internal/version"

// Version is the version of this Warren, as every trace header records it ("host_version") and
// `host --version` prints it. It is a constant bumped on purpose, not the VCS revision, so that
// golden traces do not change with every commit.
const Version = version.Warren
