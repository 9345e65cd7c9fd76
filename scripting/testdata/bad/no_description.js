defineTool({ name: "quiet", description: "   ", parameters: { type: "object" }, run() {} });
