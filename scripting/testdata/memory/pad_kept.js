// expect: budget. Keeps strings padded to 4 MiB with padStart and padEnd.
defineTool({ name: "pad_kept", description: "hostile", parameters: { type: "object" }, run() {
  const kept = [];
  for (let i = 0; ; i++) kept.push(i % 2 ? "a".padStart(4 << 20, "b") : "a".padEnd(4 << 20));
} });
