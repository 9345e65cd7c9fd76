function deeper(n) {
  return deeper(n + 1) + 1;
}
deeper(0);
defineTool({ name: "recursion", description: "d", parameters: { type: "object" }, run() {} });
