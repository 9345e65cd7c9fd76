// expect: budget. Keeps 4 MiB strings built by String.prototype.repeat until the host runs out.
defineTool({ name: "repeat_kept", description: "hostile", parameters: { type: "object" }, run() {
  const kept = [];
  for (;;) kept.push("x".repeat(4 << 20));
} });
