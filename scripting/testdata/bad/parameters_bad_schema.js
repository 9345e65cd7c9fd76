defineTool({
  name: "bad_schema",
  description: "d",
  parameters: { type: "object", properties: { n: { type: 12 } } },
  run() {},
});
