defineTool({ name: "stringly", description: "d", parameters: "object", run() {} });
