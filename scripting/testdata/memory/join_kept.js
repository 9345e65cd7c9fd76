// expect: budget. Keeps 4 MiB strings joined from an array.
defineTool({ name: "join_kept", description: "hostile", parameters: { type: "object" }, run() {
  const a = new Array(1 << 20).fill("abc");
  const kept = [];
  for (;;) kept.push(a.join(""));
} });
