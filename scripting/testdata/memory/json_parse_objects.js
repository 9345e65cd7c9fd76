// expect: budget. JSON.parse of a text of empty objects: 3 bytes of text, 200 bytes of object each.
defineTool({ name: "json_parse_objects", description: "hostile", parameters: { type: "object" }, run() {
  const text = "[" + "{},".repeat(3e5) + "{}]";
  const kept = [];
  for (;;) kept.push(JSON.parse(text));
} });
