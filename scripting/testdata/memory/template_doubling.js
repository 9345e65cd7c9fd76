// expect: heap (doubling). The same with a template literal.
defineTool({ name: "template_doubling", description: "hostile", parameters: { type: "object" }, run() {
  let s = "x";
  for (;;) s = `${s}${s}`;
} });
