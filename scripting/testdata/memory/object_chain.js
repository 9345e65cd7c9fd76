// expect: heap. A linked list of object literals, about 200 bytes each.
defineTool({ name: "object_chain", description: "hostile", parameters: { type: "object" }, run() {
  let o = null;
  for (;;) o = { next: o };
} });
