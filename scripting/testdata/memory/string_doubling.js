// expect: heap (doubling). A string doubled by concatenation: a VM instruction no built-in sees.
defineTool({ name: "string_doubling", description: "hostile", parameters: { type: "object" }, run() {
  let s = "x";
  for (;;) s += s;
} });
